"""ALFWorld on its real engine: offline-generated problems in ALFRED's rooms, or ALFWorld's own game files.

Modules: `assets` (the alfworld package's files, read without importing it), `scenes` (rooms from ALFRED floor
plans), `generator` (tasks and split pools), `pddl` (a task as a PDDL problem), `loading` (a game's
translation, grammar and names, cached), `engine` (TextWorld's PDDL engine as ALFWorld plays it), `planner`
(fast-downward plans from any state), `official` (ALFWorld's game-file layout), `alfworld_env` (the env).
Needs `pip install alfworld==0.4.2` (see `assets.INSTALL`).
"""
