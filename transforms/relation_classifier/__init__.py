"""Relation classification of entity pairs within a token window (KGERMAR §2.2).

`pairs` forms the pairs, `backend` is the interface, `probe` (trained here, see
`training`) and `huggingface` (any sequence-classification RE model) implement it,
`calibration` provides temperature scaling and ECE, and `candidates` turns predictions
into RELATION_CANDIDATES rows, also as a Beam DoFn.
"""
