"""How any learner is run (docs/architecture.md): run folders with checkpoints and
resuming (``folder``), seed jobs and worker processes (``launch``, ``worker``), live progress
(``progress``), learning curves (``curves``), and training whole runs (``train``). The command
line and the experiments call it; nothing below it imports it."""
