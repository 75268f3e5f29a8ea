"""Safe XML for the robot file readers (URDF, MJCF): elements with their file and line, no entity ever expanded.

:func:`parse_xml` reads a document with expat, keeping each element's line
(and the file it comes from: an MJCF ``<include>`` splices another file's
elements, which keep theirs), and refuses a DOCTYPE (which alone can declare
entities) and any entity declaration or reference to an external one: no
entity is expanded, nothing is fetched from the network.  Any mistake is one
:class:`~kanerobot.errors.RobotFileError` ``path:line: what and how to fix``.

>>> root = parse_xml(b'<mujoco model="m">\\n  <worldbody/>\\n</mujoco>', "m.xml", "an MJCF file")
>>> root.tag, root.attrib, root.find("worldbody").line
('mujoco', {'model': 'm'}, 2)
>>> parse_xml(b'<!DOCTYPE m [<!ENTITY e "x">]><mujoco/>', "m.xml", "an MJCF file")
Traceback (most recent call last):
  ...
kanerobot.errors.RobotFileError: m.xml:1: a DOCTYPE is not accepted in an MJCF file (it can declare entities, which are never expanded): remove it
"""

import os
import xml.parsers.expat
from dataclasses import dataclass, field

from kanerobot.errors import RobotFileError

__all__ = ["Element", "parse_xml"]


@dataclass
class Element:
    """One XML element: its tag, attributes, line, children and the file it was read from."""

    tag: str
    attrib: dict
    line: int
    children: list = field(default_factory=list)
    path: str | os.PathLike = ""

    def find(self, tag):
        """The first child called ``tag``, or None."""
        return next((child for child in self.children if child.tag == tag), None)

    def findall(self, tag):
        """The children called ``tag``, in the order of the file."""
        return [child for child in self.children if child.tag == tag]


class _Refused(Exception):
    def __init__(self, line, message):
        super().__init__(message)
        self.line = line
        self.message = message


def parse_xml(data: bytes, path: str | os.PathLike, kind: str) -> Element:
    """The document element of ``data``, every element with its line and ``path``.

    Parameters
    ----------
    data : bytes
        The file's bytes.
    path : str or Path
        The file, named in errors and kept by every element.
    kind : str
        What the file is, for the messages (``"a URDF file"``, ``"an MJCF file"``).

    Raises
    ------
    RobotFileError
        For malformed XML, a DOCTYPE, an entity declaration, or no element at all.
    """
    parser = xml.parsers.expat.ParserCreate()
    parser.SetParamEntityParsing(xml.parsers.expat.XML_PARAM_ENTITY_PARSING_NEVER)
    top = Element("", {}, 0, path=path)
    stack = [top]

    def start(tag, attrib):
        element = Element(tag, attrib, parser.CurrentLineNumber, path=path)
        stack[-1].children.append(element)
        stack.append(element)

    def end(tag):
        stack.pop()

    def doctype(*args):
        raise _Refused(
            parser.CurrentLineNumber, f"a DOCTYPE is not accepted in {kind} (it can declare entities, which are never expanded): remove it"
        )

    def entity(*args):
        raise _Refused(parser.CurrentLineNumber, "entity declarations are not accepted (no entity is ever expanded): remove them")

    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.StartDoctypeDeclHandler = doctype
    parser.EntityDeclHandler = entity
    parser.ExternalEntityRefHandler = entity
    try:
        parser.Parse(data, True)
    except _Refused as exc:
        raise RobotFileError(path, exc.line, exc.message) from None
    except xml.parsers.expat.ExpatError as exc:
        message = xml.parsers.expat.errors.messages[exc.code]
        raise RobotFileError(path, exc.lineno, f"malformed XML: {message} (column {exc.offset + 1})") from None
    if not top.children:
        raise RobotFileError(path, None, f"no XML element: {kind} is one document element")
    return top.children[0]
