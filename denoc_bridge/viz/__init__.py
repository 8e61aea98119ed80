"""Pictures: meshcat scenes and animations, their HTML export, and matplotlib plots.

``denoc_bridge.viz.show`` / ``play`` / ``export_html`` / ``start_viewer`` / ``scene_commands``
(meshcat, :mod:`denoc_bridge.viz.meshcat`); the plots live in :mod:`denoc_bridge.viz.plots`.
"""

from denoc_bridge.viz.meshcat import (
    MAX_LINK_NODES,
    MAX_SEGMENTS,
    export_html,
    play,
    scene_commands,
    show,
    start_viewer,
)

__all__ = ["export_html", "show", "play", "start_viewer", "scene_commands", "MAX_LINK_NODES", "MAX_SEGMENTS"]
