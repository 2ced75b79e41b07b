"""The verify stage: an answer's claims checked against the index, each with a verdict and its
evidence by document and page. claims (answer → claims) → evidence (one claim: cited and
retrieved units, seams) → verdicts (the judge, RefChecker's rule, ALCE metrics); check.py runs
the three for a whole answer."""
