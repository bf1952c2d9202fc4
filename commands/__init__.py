"""The command line, one module per command (``evolve``, ``inspect``, ``predict``, ``check``, ``sample``,
``bench``, ``report``, ``species``); :mod:`.main` builds the parser and owns the exit codes.

Why one module per command: each command is a thin layer over a function of the layers beneath
(the search, the run-directory reader, the experiment harness), and reads in one sitting.
"""
