"""The universe's functions, declared as data: one module per domain, each a list of dict literals.

Python literals rather than JSON files: they need no package-data configuration, compile to cached
bytecode (fast to import), can share parameter specs and world constants, and carry comments.
"""

from magic_envs.tool_planning.universe.domains import (
                                                       calendar,
                                                       devices,
                                                       files,
                                                       finance,
                                                       food,
                                                       health,
                                                       maps,
                                                       math_tools,
                                                       media,
                                                       messaging,
                                                       shopping,
                                                       travel,
                                                       weather,
)

MODULES = (weather, travel, finance, calendar, messaging, files, shopping, maps, math_tools, devices, food, health,
           media)
