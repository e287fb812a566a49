"""Query n-grams as phrase-node keys."""

from memory.linking import phrase_keys


def test_phrase_keys_hold_lower_cased_ngrams_with_a_singular_last_word():
    keys = phrase_keys("Which football clubs told Stories?")
    assert {"football club", "football clubs", "story", "stories", "which"} <= keys
    assert "class" in phrase_keys("a class") and "clas" not in phrase_keys("a class")
    assert all(len(k.split()) <= 4 for k in phrase_keys("one two three four five six"))
