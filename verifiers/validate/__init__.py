"""Validation: prove each candidate's verifier against the control matrix.

``trajforge validate OUT`` mines hidden tests (:mod:`.hidden`), runs the oracle and the
controls in one sandbox session per task (:mod:`.matrix`, :mod:`.batch`), applies the
acceptance rules (:mod:`.rules`), writes the evidence into each task.json (:mod:`.run`) and
the reports (:mod:`.report`). ``trajforge verify`` scores one solution (:mod:`.verify`).
"""
