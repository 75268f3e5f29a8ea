"""The browser viewer: ``kr.view(robot)`` and ``kanerobot view ROBOT`` (needs ``pip install 'kanerobot[view]'``).

:mod:`kanerobot.viewer.server` serves the page (viser),
:mod:`kanerobot.viewer.recording` reads saved simulations to play back and
:mod:`kanerobot.viewer.visuals` a URDF's visual elements.  Importing this
package does not import viser: :func:`view` does, and says how to install
it when it is missing.
"""

from kanerobot.viewer.recording import Recording, read_recording
from kanerobot.viewer.server import Viewer, view

__all__ = ["Recording", "Viewer", "read_recording", "view"]
