"""`kgmem facts` on the sample build: an entity without matching facts is said so."""

from kgmem.cli import main


def test_an_entity_without_facts_gets_a_sentence_not_an_empty_table(sample_build, capsys):
    workspace, _ = sample_build
    args = ["facts", "Sam Okafor", "--collection", "sample", "--relation", "no_such_relation"]
    assert main([*args, "--home", str(workspace.root)]) == 0
    printed = capsys.readouterr().out
    assert "Sam Okafor is an entity of sample but has no facts (relation no_such_relation)." in (
        " ".join(printed.split())
    )
    assert "head" not in printed, "no table header for zero rows"
