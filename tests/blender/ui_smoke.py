"""Run Panel / Menu ``draw()`` headless against a strict fake ``UILayout``.

A real ``UILayout`` cannot be had in background mode (every route segfaults, see
``shared/notes/blender-headless.md`` section 4), and a real layout would not complain anyway: a
property typo only prints "property not found" and draws a red label. So ``draw`` runs against
:class:`FakeLayout`, which checks every call against the RNA of ``bpy.types.UILayout`` of the
running Blender version:

- arguments: names, required ones, positional vs keyword (only required parameters may be
  positional, as in bpy), types, ``None`` where the RNA forbids it, enum values (icons included);
- property names on ``data`` (``prop``, ``prop_search``, ``prop_enum``, ``template_list`` ...),
  including ``'["idprop"]'``, and enum values given to ``prop_enum``;
- operator idnames and every assignment to the returned operator properties;
- ``menu`` / ``popover`` / ``template_list`` class names (must be registered);
- layout attribute names, read-only ones and value types (``alignment``, ``scale_y`` ...).

Every mistake raises :class:`SmokeDrawError` (an ``AssertionError``; signature mistakes are also a
``TypeError``, unknown names also an ``AttributeError``) whose message names the panel, the call and
what is wrong.

Usage (inside ``temp_override(**view3d_override())`` so that ``context.space_data`` is a 3D View)::

    record = smoke_draw(PROCANIM_PT_juggling)
    assert "procanim.juggle" in record.operators
"""

from __future__ import annotations

import difflib
import inspect
import numbers
import operator as _operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import bpy

__all__ = [
    "DrawRecord",
    "FakeLayout",
    "FakeOperatorProperties",
    "SmokeDrawAttributeError",
    "SmokeDrawError",
    "SmokeDrawTypeError",
    "smoke_draw",
    "smoke_draw_function",
    "smoke_draw_menu",
    "smoke_draw_operator",
]

_LAYOUT_RNA = bpy.types.UILayout.bl_rna
_LAYOUT_FUNCTIONS = _LAYOUT_RNA.functions
_LAYOUT_PROPERTIES = _LAYOUT_RNA.properties

# Parameters that name a property of the struct passed in the paired parameter.
_PROPERTY_OF = {
    "property": "data",
    "search_property": "search_data",
    "propname": "dataptr",
    "active_propname": "active_dataptr",
}
# Parameters that hold an operator idname (empty means "no button").
_OPERATOR_PARAMETERS = ("operator", "new", "open", "unlink", "activate_operator", "drag_operator")
# Output parameters that are the properties of the operator named by another parameter.
_OPERATOR_OUTPUTS = {
    "properties": "operator",
    "activate_operator_properties": "activate_operator",
    "drag_operator_properties": "drag_operator",
}
# Menu types Blender registers from C: they work in layout.menu() but are not in bpy.types.
# (Found by listing the menus Blender's own bl_ui scripts draw that bpy.types lacks, 4.2 to 5.0.)
_C_MENU_TYPES = frozenset({
    "FILEBROWSER_MT_operations_menu", "NODE_MT_node_add_root_catalogs", "NODE_MT_node_swap_root_catalogs",
    "OBJECT_MT_link_to_collection", "OBJECT_MT_modifier_add_root_catalogs", "OBJECT_MT_move_to_collection",
    "SEQUENCER_MT_add_scene", "TOPBAR_MT_file_open_recent", "TOPBAR_MT_undo_history", "WM_MT_button_context",
})
# Functions whose ``property`` must be an enum (of ``data``, or of the operator for operator_*).
_ENUM_PROPERTY_FUNCTIONS = frozenset(
    {"prop_enum", "props_enum", "prop_menu_enum", "prop_tabs_enum", "operator_enum", "operator_menu_enum"})


class SmokeDrawError(AssertionError):
    """A draw() call that a real UILayout would reject or silently draw wrong."""


class SmokeDrawTypeError(SmokeDrawError, TypeError):
    """Wrong arguments for a UILayout function or a wrong value type."""


class SmokeDrawAttributeError(SmokeDrawError, AttributeError):
    """A name that does not exist: layout function or attribute, property, operator, class.

    Also an ``AttributeError`` so that ``hasattr(layout, "panel")`` version checks keep working.
    """


@dataclass
class DrawRecord:
    """What a draw produced, in call order, for tests that check more than "it did not raise".

    ``calls`` holds ``(function, arguments)`` for every UILayout call (arguments by parameter name),
    ``operator_properties`` the values assigned to each operator button, in button order.
    """

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    operator_properties: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    @property
    def operators(self) -> list[str]:
        """Operator idnames of every button, in draw order."""
        return [idname for idname, _values in self.operator_properties]

    @property
    def properties(self) -> list[str]:
        """``Struct.property`` of every property widget, in draw order."""
        drawn = []
        for _function, arguments in self.calls:
            for name, data_name in _PROPERTY_OF.items():
                data = arguments.get(data_name)
                if name in arguments and data is not None:
                    drawn.append(f"{_struct_name(data)}.{arguments[name]}")
        return drawn

    @property
    def labels(self) -> list[str]:
        """Texts of ``label()`` calls, in draw order."""
        return [arguments.get("text", "") for function, arguments in self.calls if function == "label"]


# ---------------------------------------------------------------------------------------------
# Names and lookups


def _struct_name(data: Any) -> str:
    rna = getattr(data, "bl_rna", None)
    return rna.identifier if rna is not None else type(data).__name__


def _suggest(name: str, candidates: Sequence[str]) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=3)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""


def _operator_rna(idname: Any, where: str) -> Any:
    """The RNA struct of a registered operator, from ``"mod.name"`` or ``"MOD_OT_name"``."""
    if not isinstance(idname, str) or not idname:
        raise SmokeDrawTypeError(f"{where}: operator idname must be a non-empty string, got {idname!r}")
    if "_OT_" in idname:
        module, _sep, name = idname.partition("_OT_")
        module = module.lower()
    else:
        module, _sep, name = idname.partition(".")
    if not (module and name) or "." in name:
        raise SmokeDrawAttributeError(f"{where}: {idname!r} is not an operator idname ('module.name')")
    try:
        return getattr(getattr(bpy.ops, module), name).get_rna_type()
    except (AttributeError, KeyError):
        known = [op for op in dir(getattr(bpy.ops, module, None) or bpy.ops) if not op.startswith("_")]
        raise SmokeDrawAttributeError(
            f"{where}: operator {idname!r} is not registered{_suggest(name, known)}") from None


def _registered_class(name: Any, base: type, what: str, where: str) -> None:
    if not isinstance(name, str) or not name:
        raise SmokeDrawTypeError(f"{where}: {what} name must be a non-empty string, got {name!r}")
    if base is bpy.types.Menu and name in _C_MENU_TYPES:
        return
    cls = getattr(bpy.types, name, None)
    if not (isinstance(cls, type) and issubclass(cls, base)):
        known = [n for n in dir(bpy.types) if isinstance(getattr(bpy.types, n, None), type)
                 and issubclass(getattr(bpy.types, n), base)]
        raise SmokeDrawAttributeError(f"{where}: {what} {name!r} is not registered{_suggest(name, known)}")


def _struct_is_a(rna: Any, identifier: str) -> bool:
    while rna is not None:
        if rna.identifier == identifier:
            return True
        rna = rna.base
    return False


# ---------------------------------------------------------------------------------------------
# Value checks


def _enum_identifiers(prop: Any) -> list[str]:
    """Static enum items; empty when the items come from a callback (any identifier may be valid).

    Without a context, Python callbacks list nothing and C callbacks list the placeholder 'DEFAULT'.
    """
    identifiers = [item.identifier for item in prop.enum_items]
    return [] if identifiers == ["DEFAULT"] else identifiers


def _check_value(prop: Any, value: Any, where: str) -> None:
    """Raise unless ``value`` is what bpy would accept for RNA property / parameter ``prop``."""
    kind = prop.type
    if value is None:
        if kind in {"STRING", "POINTER"} and not prop.is_never_none:
            return
        raise SmokeDrawTypeError(f"{where}: None is not accepted (expected {kind.lower()})")
    length = getattr(prop, "array_length", 0)
    if length and kind in {"BOOLEAN", "INT", "FLOAT"}:
        if isinstance(value, (str, bytes)) or not hasattr(value, "__len__"):
            raise SmokeDrawTypeError(f"{where}: expected a sequence of {length} values, got {value!r}")
        dimensions = [d for d in getattr(prop, "array_dimensions", (length,)) if d] or [length]
        if len(value) != dimensions[0]:
            raise SmokeDrawTypeError(f"{where}: expected {dimensions[0]} values, got {len(value)}")
        if len(dimensions) == 1:  # matrices are only checked for their row count
            for item in value:
                _check_scalar(kind, prop, item, where)
        return
    _check_scalar(kind, prop, value, where)


def _check_scalar(kind: str, prop: Any, value: Any, where: str) -> None:
    if kind == "BOOLEAN":
        if isinstance(value, bool) or (isinstance(value, numbers.Integral) and value in (0, 1)):
            return
        if type(value).__name__ == "bool_":  # numpy bool, accepted through its int value
            return
        raise SmokeDrawTypeError(f"{where}: expected True/False, got {type(value).__name__} {value!r}")
    if kind == "INT":
        try:
            _operator.index(value)
        except TypeError:
            raise SmokeDrawTypeError(
                f"{where}: expected an int, got {type(value).__name__} {value!r}") from None
        return
    if kind == "FLOAT":
        if isinstance(value, numbers.Real):
            return
        raise SmokeDrawTypeError(f"{where}: expected a float, got {type(value).__name__} {value!r}")
    if kind == "STRING":
        if isinstance(value, str):
            return
        raise SmokeDrawTypeError(f"{where}: expected a string, got {type(value).__name__} {value!r}")
    if kind == "ENUM":
        identifiers = _enum_identifiers(prop)
        values = value if prop.is_enum_flag else {value}
        if prop.is_enum_flag and not isinstance(value, (set, frozenset)):
            raise SmokeDrawTypeError(f"{where}: expected a set of enum identifiers, got {value!r}")
        for item in values:
            if not isinstance(item, str):
                raise SmokeDrawTypeError(f"{where}: enum value must be a string, got {item!r}")
            if identifiers and item not in identifiers:
                raise SmokeDrawTypeError(
                    f"{where}: enum {item!r} not found{_suggest(item, identifiers)}"
                    + ("" if len(identifiers) > 20 else f" in {tuple(identifiers)}"))
        return
    if kind == "POINTER":
        rna = getattr(value, "bl_rna", None)
        if rna is None:
            raise SmokeDrawTypeError(f"{where}: expected a Blender struct, got {type(value).__name__}")
        fixed = prop.fixed_type.identifier
        is_fake = isinstance(value, FakeOperatorProperties)
        if fixed != "AnyType" and not is_fake and not _struct_is_a(rna, fixed):
            raise SmokeDrawTypeError(f"{where}: expected {fixed}, got {rna.identifier}")
        return


def _data_property(data: Any, name: Any, where: str) -> Any:
    """The RNA property ``name`` of ``data`` (``None`` for an ID property ``'["key"]'``)."""
    if data is None:
        raise SmokeDrawTypeError(f"{where}: data is None (property {name!r})")
    if not isinstance(name, str) or not name:
        raise SmokeDrawTypeError(f"{where}: property name must be a non-empty string, got {name!r}")
    if name.startswith('["') and name.endswith('"]'):
        key = name[2:-2]
        try:
            keys = list(data.keys())
        except (AttributeError, TypeError):
            raise SmokeDrawAttributeError(
                f"{where}: {_struct_name(data)} cannot hold ID properties ({name})") from None
        if key not in keys:
            raise SmokeDrawAttributeError(
                f"{where}: ID property {name} not found on {_struct_name(data)}{_suggest(key, keys)}")
        return None
    rna = getattr(data, "bl_rna", None)
    if rna is None:
        raise SmokeDrawTypeError(f"{where}: data must be a Blender struct, got {type(data).__name__}")
    if name not in rna.properties or name == "rna_type":
        hint = _suggest(name, rna.properties.keys())
        raise SmokeDrawAttributeError(f"{where}: property {name!r} not found on {rna.identifier}{hint}")
    return rna.properties[name]


# ---------------------------------------------------------------------------------------------
# Fakes


class FakeOperatorProperties:
    """Stands for the ``OperatorProperties`` a button returns; only real properties can be set."""

    def __init__(self, idname: str, rna: Any, record: DrawRecord, where: str) -> None:
        values: dict[str, Any] = {}
        object.__setattr__(self, "_idname", idname)
        object.__setattr__(self, "_rna", rna)
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_where", where)
        record.operator_properties.append((idname, values))

    @property
    def bl_rna(self) -> Any:
        return self._rna

    @property
    def rna_type(self) -> Any:
        return self._rna

    def _property(self, name: str) -> Any:
        properties = self._rna.properties
        if name not in properties or name == "rna_type":
            raise SmokeDrawAttributeError(
                f"{self._where}: operator {self._idname!r} has no property {name!r}"
                f"{_suggest(name, [p for p in properties.keys() if p != 'rna_type'])}")
        return properties[name]

    def __setattr__(self, name: str, value: Any) -> None:
        prop = self._property(name)
        if prop.is_readonly:
            raise SmokeDrawAttributeError(f"{self._where}: {self._idname}.{name} is read-only")
        where = f"{self._where}: {self._idname}.{name} = {value!r}"
        _check_value(prop, value, where)
        if getattr(prop, "array_length", 0) and prop.type in {"BOOLEAN", "INT", "FLOAT"}:
            value = _CheckedArray(prop, f"{self._where}: {self._idname}.{name}[]", value)
        self._values[name] = value

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        prop = self._property(name)
        if name in self._values:
            return self._values[name]
        if getattr(prop, "array_length", 0) and prop.type in {"BOOLEAN", "INT", "FLOAT"}:
            # Menus write single items (props.constraint_axis[0] = True): hand out a checked list.
            array = _CheckedArray(prop, f"{self._where}: {self._idname}.{name}[]", prop.default_array)
            self._values[name] = array
            return array
        if prop.type in {"POINTER", "COLLECTION"}:
            return None
        if prop.type == "ENUM" and prop.is_enum_flag:
            return set(prop.default_flag)
        return prop.default

    def __repr__(self) -> str:
        return f"<FakeOperatorProperties {self._idname} {self._values}>"


class _CheckedArray(list):
    """An operator's array property: item assignments are type-checked like the real one."""

    def __init__(self, prop: Any, where: str, values: Any) -> None:
        super().__init__(values)
        self._prop = prop
        self._where = where

    def __setitem__(self, index: Any, value: Any) -> None:
        if isinstance(index, slice):
            for item in value:
                _check_scalar(self._prop.type, self._prop, item, f"{self._where} = {item!r}")
        else:
            if not -len(self) <= index < len(self):
                raise SmokeDrawError(f"{self._where}: index {index} out of range (length {len(self)})")
            _check_scalar(self._prop.type, self._prop, value, f"{self._where} = {value!r}")
        super().__setitem__(index, value)


class FakeLayout:
    """A strict stand-in for ``bpy.types.UILayout``; see the module docstring for what it checks."""

    def __init__(self, record: DrawRecord, owner: str, path: str = "layout") -> None:
        object.__setattr__(self, "_record", record)
        object.__setattr__(self, "_owner", owner)
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_attributes", {})

    @property
    def bl_rna(self) -> Any:
        return _LAYOUT_RNA

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if name in _LAYOUT_FUNCTIONS:
            function = _LAYOUT_FUNCTIONS[name]
            return lambda *args, **kwargs: self._call(function, args, kwargs)
        if name in _LAYOUT_PROPERTIES and name != "rna_type":
            if name in self._attributes:
                return self._attributes[name]
            prop = _LAYOUT_PROPERTIES[name]
            return prop.default
        raise SmokeDrawAttributeError(
            f"{self._owner}: {self._path}.{name}: UILayout has no function or attribute {name!r}"
            f"{_suggest(name, list(_LAYOUT_FUNCTIONS.keys()) + list(_LAYOUT_PROPERTIES.keys()))}")

    def __setattr__(self, name: str, value: Any) -> None:
        where = f"{self._owner}: {self._path}.{name} = {value!r}"
        if name not in _LAYOUT_PROPERTIES or name == "rna_type":
            raise SmokeDrawAttributeError(
                f"{where}: UILayout has no attribute {name!r}{_suggest(name, _LAYOUT_PROPERTIES.keys())}")
        prop = _LAYOUT_PROPERTIES[name]
        if prop.is_readonly:
            raise SmokeDrawAttributeError(f"{where}: UILayout.{name} is read-only")
        _check_value(prop, value, where)
        self._attributes[name] = value

    def _call(self, function: Any, args: tuple, kwargs: dict[str, Any]) -> Any:
        name = function.identifier
        where = f"{self._owner}: {self._path}.{name}()"
        arguments = self._bind(function, args, kwargs, where)
        for parameter, value in arguments.items():
            _check_value(function.parameters[parameter], value, f"{where} argument {parameter}={value!r}")
        self._check_names(name, arguments, where)
        self._record.calls.append((name, arguments))
        return self._outputs(function, arguments, where)

    @staticmethod
    def _bind(function: Any, args: tuple, kwargs: dict[str, Any], where: str) -> dict[str, Any]:
        """Map arguments to parameters the way bpy does: only required ones may be positional."""
        inputs = [p for p in function.parameters if not p.is_output]
        if len(args) > len(inputs):
            raise SmokeDrawTypeError(f"{where}: takes at most {len(inputs)} arguments, got {len(args)}")
        arguments: dict[str, Any] = {}
        for prop, value in zip(inputs, args, strict=False):
            if not prop.is_required:
                raise SmokeDrawTypeError(f"{where}: parameter {prop.identifier!r} must be a keyword argument")
            arguments[prop.identifier] = value
        names = [p.identifier for p in inputs]
        for key, value in kwargs.items():
            if key not in names:
                raise SmokeDrawTypeError(f"{where}: unexpected keyword argument {key!r}"
                                         f"{_suggest(key, names)}; parameters: {names}")
            if key in arguments:
                raise SmokeDrawTypeError(f"{where}: parameter {key!r} given twice")
            arguments[key] = value
        missing = [p.identifier for p in inputs if p.is_required and p.identifier not in arguments]
        if missing:
            raise SmokeDrawTypeError(f"{where}: required parameter(s) {missing} not given")
        return arguments

    def _check_names(self, name: str, arguments: dict[str, Any], where: str) -> None:
        """Check the names a call refers to: properties, operators, menus, panels, list types."""
        for parameter, data_parameter in _PROPERTY_OF.items():
            if parameter in arguments and data_parameter in arguments:
                prop = _data_property(arguments[data_parameter], arguments[parameter],
                                      f"{where} {data_parameter}.{parameter}")
                if name in _ENUM_PROPERTY_FUNCTIONS and prop is not None and prop.type != "ENUM":
                    raise SmokeDrawTypeError(f"{where}: property {arguments[parameter]!r} is not an enum")
                if name == "prop_enum" and prop is not None:
                    _check_value(prop, arguments.get("value"), f"{where} value")
                if name == "template_list" and prop is not None:
                    expected = "COLLECTION" if parameter == "propname" else "INT"
                    if parameter in {"propname", "active_propname"} and prop.type != expected:
                        raise SmokeDrawTypeError(f"{where}: {parameter} {arguments[parameter]!r}"
                                                 f" must be a {expected.lower()} property")
        for parameter in _OPERATOR_PARAMETERS:
            idname = arguments.get(parameter)
            if idname:
                rna = _operator_rna(idname, f"{where} {parameter}")
                if parameter == "operator" and "property" in arguments and "data" not in arguments:
                    property_name = arguments["property"]
                    prop = _data_property(_RnaHolder(rna), property_name, f"{where} operator property")
                    if name in _ENUM_PROPERTY_FUNCTIONS and prop.type != "ENUM":
                        raise SmokeDrawTypeError(f"{where}: property {property_name!r} is not an enum")
        if arguments.get("menu") is not None:
            _registered_class(arguments["menu"], bpy.types.Menu, "menu", where)
        if name != "panel" and arguments.get("panel") is not None:
            _registered_class(arguments["panel"], bpy.types.Panel, "panel", where)
        if "listtype_name" in arguments:
            _registered_class(arguments["listtype_name"], bpy.types.UIList, "UI list", where)

    def _outputs(self, function: Any, arguments: dict[str, Any], where: str) -> Any:
        results = []
        children = 0
        for prop in function.parameters:
            if not prop.is_output:
                continue
            if prop.type == "POINTER" and prop.fixed_type.identifier == "UILayout":
                children += 1
                suffix = f"[{children - 1}]" if function.identifier in {"panel", "panel_prop"} else ""
                results.append(FakeLayout(self._record, self._owner,
                                          f"{self._path}.{function.identifier}(){suffix}"))
            elif prop.type == "POINTER" and prop.fixed_type.identifier == "OperatorProperties":
                idname = arguments.get(_OPERATOR_OUTPUTS.get(prop.identifier, "operator"))
                rna = _operator_rna(idname, where) if idname else None
                results.append(FakeOperatorProperties(idname, rna, self._record, where) if idname else None)
            elif prop.type == "STRING":
                results.append("")
            elif prop.type in {"INT", "FLOAT"}:
                results.append(0)
            elif prop.type == "BOOLEAN":
                results.append(False)
            else:
                results.append(None)
        if not results:
            return None
        return results[0] if len(results) == 1 else tuple(results)

    def __repr__(self) -> str:
        return f"<FakeLayout {self._path} of {self._owner}>"


class _RnaHolder:
    """Lets an operator's RNA struct be checked like ``data`` (``data.bl_rna.properties``)."""

    def __init__(self, rna: Any) -> None:
        self.bl_rna = rna


class _FakeSelf:
    """The ``self`` a ``draw`` sees: ``layout``, the class's attributes and methods and, when an
    ``instance`` is given (operator properties, add-on preferences), that instance's RNA properties."""

    _DEFAULTS = {"is_popover": False, "use_pin": False, "custom_data": None, "translation_context": "*"}

    def __init__(self, cls: type, layout: FakeLayout, instance: Any = None) -> None:
        self._cls = cls
        self._instance = instance
        self.layout = layout
        self.text = getattr(cls, "bl_label", "")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        cls = self.__dict__["_cls"]
        instance = self.__dict__["_instance"]
        if instance is not None and (name == "bl_rna" or name in instance.bl_rna.properties):
            return getattr(instance, name)
        try:
            value = getattr(cls, name)
        except AttributeError:
            if name in self._DEFAULTS:
                return self._DEFAULTS[name]
            raise SmokeDrawAttributeError(f"{cls.__name__}: self.{name} does not exist") from None
        try:
            raw = inspect.getattr_static(cls, name)
        except AttributeError:
            return value
        if isinstance(raw, (staticmethod, classmethod)) or not inspect.isfunction(raw):
            return value
        return raw.__get__(self, cls)  # a plain method: bind it to the fake self, as draw() expects


# ---------------------------------------------------------------------------------------------
# Entry points


def _draw_functions(method: Callable) -> list[Callable]:
    """The functions a draw method runs: Blender wraps ``Panel.append(fn)`` extras in a loop that
    swallows exceptions, so those are unwrapped and run one by one."""
    return list(getattr(method, "_draw_funcs", None) or [method])


def _run(owner: str, function: Callable, fake_self: _FakeSelf, context: Any) -> None:
    try:
        function(fake_self, context)
    except SmokeDrawError as error:
        raise type(error)(f"{owner}: {error}" if not str(error).startswith(owner) else str(error)) from error


def _check_poll(cls: type, context: Any) -> None:
    poll = getattr(cls, "poll", None)
    if poll is not None and not poll(context):
        raise SmokeDrawError(f"{cls.__name__}.poll() is False in this context, so draw() would not run "
                             "(pass check_poll=False to draw anyway)")


def smoke_draw(panel_cls: type, context: Any = None, *, check_poll: bool = True,
               instance: Any = None) -> DrawRecord:
    """Run ``draw_header``, ``draw_header_preset`` and ``draw`` of a Panel class against fake layouts.

    ``context`` defaults to ``bpy.context`` (under any active ``temp_override``). With
    ``check_poll`` a ``poll()`` that returns False is an error: nothing would be drawn.
    ``instance`` supplies ``self``'s RNA properties for classes whose draw reads them, e.g.
    ``smoke_draw(type(prefs), instance=prefs)`` for AddonPreferences.
    Returns the :class:`DrawRecord` of every call. Raises :class:`SmokeDrawError` on any mistake.
    """
    context = bpy.context if context is None else context
    if check_poll:
        _check_poll(panel_cls, context)
    record = DrawRecord()
    owner = panel_cls.__name__
    for method_name in ("draw_header", "draw_header_preset", "draw"):
        method = getattr(panel_cls, method_name, None)
        if method is None:
            continue
        for function in _draw_functions(method):
            layout = FakeLayout(record, f"{owner}.{method_name}")
            _run(f"{owner}.{method_name}", function, _FakeSelf(panel_cls, layout, instance), context)
    return record


def smoke_draw_menu(menu_cls: type, context: Any = None, *, check_poll: bool = True) -> DrawRecord:
    """Run a Menu class's ``draw`` (and every function appended to it) against a fake layout."""
    context = bpy.context if context is None else context
    if check_poll:
        _check_poll(menu_cls, context)
    record = DrawRecord()
    owner = f"{menu_cls.__name__}.draw"
    for function in _draw_functions(menu_cls.draw):
        _run(owner, function, _FakeSelf(menu_cls, FakeLayout(record, owner)), context)
    return record


def smoke_draw_function(draw_function: Callable, context: Any = None, owner_cls: type = bpy.types.Menu
                        ) -> DrawRecord:
    """Run a loose draw function ``fn(self, context)``, e.g. one appended to a built-in menu."""
    context = bpy.context if context is None else context
    record = DrawRecord()
    owner = getattr(draw_function, "__qualname__", repr(draw_function))
    _run(owner, draw_function, _FakeSelf(owner_cls, FakeLayout(record, owner)), context)
    return record


def smoke_draw_operator(operator_cls: type, context: Any = None, **values: Any) -> DrawRecord:
    """Run an Operator class's ``draw`` (its redo / dialog panel) with ``self`` holding its properties.

    ``values`` set operator properties first (checked like button assignments); the rest keep their
    defaults. ``self.layout.prop(self, "name")`` is checked against the operator's own properties.
    """
    context = bpy.context if context is None else context
    record = DrawRecord()
    idname = operator_cls.bl_idname
    owner = f"{operator_cls.__name__}.draw"
    properties = FakeOperatorProperties(idname, _operator_rna(idname, owner), record, owner)
    for name, value in values.items():
        setattr(properties, name, value)
    record.operator_properties.clear()  # the operator itself is not a button it draws
    _run(owner, operator_cls.draw, _FakeSelf(operator_cls, FakeLayout(record, owner), properties), context)
    return record
