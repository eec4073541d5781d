"""The experiments of Section 7, built on the core algorithms: bootstrap variability
intervals and coverage (:mod:`.bootstrap`), sweeps over settings (:mod:`.sweeps`), the
paper's reproduction (:mod:`.reproduce`) and the command line (:mod:`.cli`)."""
