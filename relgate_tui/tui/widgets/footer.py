"""The footer that never cuts a key off: every key of the screen is whole on the bottom line, or a ``? more keys``
item says where the others are.

Textual's ``Footer`` lays its keys out left to right and lets the last ones run under the command palette's key at
the right end (at 80 columns Results ended at ``l``; ``a``, ``t``, ``v``, Back and Help were off screen). This
footer measures its keys before it draws them (a key is ``key description`` with Textual's own padding):

1. every key in the normal style if they fit beside the palette's key;
2. else every key in the compact style (one column between keys instead of two);
3. else the compact style with the keys that do not fit left out — the last ones first, never Escape (the way back)
   or ``?`` — and ``?`` relabelled ``more keys``: the help panel lists every key of the screen, hidden ones too.

It is laid out again whenever its width changes, so a resize never leaves a key cut or a stale "more keys", and
only when the fitted layout changes: Textual's ``Footer`` rebuilds its keys on every change of the screen's bindings
(each focus change), which redraws an unchanged footer; here a change of bindings that leaves the keys drawn, their
descriptions, enabled states and tooltips, the style and the width as they are draws nothing new.

:class:`StockFooter` is Textual's ``Footer`` itself — the same keys, groups, classes and styles, drawn the same —
built for less: it skips the rebuild when the keys it would compose are the ones drawn, and gives each key its
compact style when it is made instead of through ``data_bind`` (whose watchers restyle every key twice as it mounts:
once for FooterKey's default ``compact``, once for the footer's); a later change of the footer's ``compact`` is passed
on to its keys as ``data_bind`` would.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from itertools import groupby

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel, KeyGroup

__all__ = ["KeysFooter", "MORE_KEYS", "StockFooter", "fit_keys"]

MORE_KEYS = "more keys"
PINNED = ("escape", "question_mark")  # the way back and the way to every key stay on screen
HELP_KEY = "question_mark"


@dataclass(frozen=True)
class _Key:
    key: str  # the binding's first key (what a click simulates)
    display: str
    description: str
    action: str
    enabled: bool
    tooltip: str


def _width(k: _Key, description: str, compact: bool) -> int:
    """Cells one key takes: Textual's FooterKey pads the key by 1 each side and the description by 1 on the right
    (normal), or puts one space between them and one column of margin after (compact)."""
    body = cell_len(k.display) + (cell_len(description) + 1 if description else 0)
    return body + 1 if compact else body + 2


def fit_keys(keys: list[_Key], width: int) -> tuple[list[tuple[_Key, str]], bool]:
    """The keys to draw within ``width`` cells, each with the description it is drawn with, and whether in the
    compact style (module docstring's three steps)."""
    whole = [(k, k.description) for k in keys]
    for compact in (False, True):
        if sum(_width(k, d, compact) for k, d in whole) <= width:
            return whole, compact
    shown = list(whole)
    droppable = [i for i, (k, _) in enumerate(shown) if k.key not in PINNED]

    def more(pairs: list[tuple[_Key, str]]) -> list[tuple[_Key, str]]:
        return [(k, MORE_KEYS if k.key == HELP_KEY else d) for k, d in pairs]

    while droppable and sum(_width(k, d, True) for k, d in more(shown)) > width:
        shown.pop(droppable.pop())
    return more(shown), True


@dataclass(frozen=True)
class _Layout:
    width: int
    shown: tuple[tuple[_Key, str], ...]
    compact: bool
    palette: tuple[Binding, bool, str] | None


class KeysFooter(Footer):
    """A ``Footer`` whose keys always fit (module docstring). Used like ``Footer()``."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._laid_out_for = 0
        self._drawn: _Layout | None = None

    def _keys(self) -> list[_Key]:
        seen: dict[str, _Key] = {}
        for _node, binding, enabled, tooltip in self.screen.active_bindings.values():
            if not binding.show or binding.action in seen:
                continue
            seen[binding.action] = _Key(binding.key, self.app.get_key_display(binding), binding.description,
                                        binding.action, enabled, tooltip)
        keys = list(seen.values())
        # the way back and help at the end, where a reader looks for them (Textual lists the app's keys first)
        return [k for k in keys if k.key not in PINNED] + [k for k in keys if k.key in PINNED]

    def _palette(self) -> tuple[Binding, bool, str] | None:
        if not (self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE):
            return None
        found = self.screen.active_bindings.get(self.app.COMMAND_PALETTE_BINDING)
        return None if found is None else (found[1], found[2], found[3])

    def _layout(self) -> _Layout:
        """What :meth:`compose` draws now: the width, the keys that fit with their descriptions, the style, the
        palette's key."""
        width = self.size.width or self.app.size.width
        palette = self._palette()
        room = width
        if palette is not None:  # docked at the right end: its key, its description, Textual's padding and border
            room -= cell_len(self.app.get_key_display(palette[0])) + cell_len(palette[0].description) + 3
        shown, compact = fit_keys(self._keys(), room)
        return _Layout(width, tuple(shown), compact, palette)

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        layout = self._drawn = self._layout()
        self._laid_out_for = layout.width
        self.set_reactive(Footer.compact, layout.compact)
        self.set_class(layout.compact, "-compact")
        for k, description in layout.shown:
            key = FooterKey(k.key, k.display, description, k.action, disabled=not k.enabled,
                            tooltip=k.tooltip or k.description)
            key.set_reactive(FooterKey.compact, layout.compact)  # what data_bind(compact=…) gave, with no watcher
            key.set_class(layout.compact, "-compact")  # the class FooterKey's own compact watcher sets
            yield key
        if layout.palette is not None:
            binding, enabled, tooltip = layout.palette
            yield FooterKey(binding.key, self.app.get_key_display(binding), binding.description, binding.action,
                            classes="-command-palette", disabled=not enabled,
                            tooltip=binding.tooltip or binding.description)

    def bindings_changed(self, screen: Screen[object]) -> None:
        """Textual's rebuild on a change of the screen's bindings, skipped when the layout drawn would not change."""
        if (self._drawn is not None and screen.app.app_focus and self.is_attached and screen is self.screen
                and self._layout() == self._drawn):
            return
        super().bindings_changed(screen)

    def on_resize(self, event: events.Resize) -> None:
        if self._bindings_ready and event.size.width != self._laid_out_for:
            self.call_after_refresh(self.recompose)


# one key as StockFooter draws it: (key, key display, description, action, disabled, tooltip)
_KeySpec = tuple[str, str, str, str, bool, str]
# a binding group of several keys: ("group", compact, description, its keys) — or ("key", one key)
_Item = tuple[str, bool, str, tuple[_KeySpec, ...]] | tuple[str, _KeySpec]


def _footer_key(spec: _KeySpec, classes: str, compact: bool) -> FooterKey:
    """A FooterKey in the state Textual's Footer leaves it in once mounted: ``compact`` set and its ``-compact``
    class present exactly when compact (what FooterKey's watcher sets), with no watcher run."""
    key, display, description, action, disabled, tooltip = spec
    widget = FooterKey(key, display, description, action, disabled=disabled, tooltip=tooltip,
                       classes=f"{classes} -compact".strip() if compact else classes)
    widget.set_reactive(FooterKey.compact, compact)
    return widget


class StockFooter(Footer):
    """Textual's ``Footer``, drawn the same and built for less (module docstring). Used like ``Footer()``."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self._drawn_plan: tuple[int, tuple[_Item, ...], _KeySpec | None] | None = None

    def _plan(self) -> tuple[int, tuple[_Item, ...], _KeySpec | None]:
        """What Textual's ``Footer.compose`` draws now: the number of actions (its grid columns), the keys and
        groups in order, the palette's key."""
        active = self.screen.active_bindings
        by_action: defaultdict[str, list[tuple[Binding, bool, str]]] = defaultdict(list)
        for _node, binding, enabled, tooltip in active.values():
            if binding.show:
                by_action[binding.action].append((binding, enabled, tooltip))
        display = self.app.get_key_display
        items: list[_Item] = []
        for group, runs in groupby(by_action.values(), lambda multi: multi[0][0].group):
            multi = list(runs)
            firsts = [m[0] for m in multi]
            if group is not None and len(multi) > 1:
                items.append(("group", group.compact, group.description,
                              tuple((b.key, display(b), "", b.action, not e, t or b.description) for b, e, t in firsts)))
            else:
                items.extend(("key", (b.key, display(b), b.description, b.action, not e, t)) for b, e, t in firsts)
        palette: _KeySpec | None = None
        if self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
            found = active.get(self.app.COMMAND_PALETTE_BINDING)
            if found is not None:
                _node, b, enabled, _tooltip = found
                palette = (b.key, display(b), b.description, b.action, not enabled, b.tooltip or b.description)
        return len(by_action), tuple(items), palette

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        columns, items, palette = self._drawn_plan = self._plan()
        self.styles.grid_size_columns = columns
        compact = self.compact
        for item in items:
            if item[0] == "group":
                _, group_compact, description, specs = item  # type: ignore[misc]
                with KeyGroup(classes="-compact" if group_compact else ""):
                    for spec in specs:
                        yield _footer_key(spec, "-grouped", compact)
                yield FooterLabel(description)
            else:
                yield _footer_key(item[1], "", compact)  # type: ignore[arg-type]
        if palette is not None:
            yield _footer_key(palette, "-command-palette", True)  # not bound to the footer's compact: FooterKey's own

    def _watch_compact(self, compact: bool) -> None:
        """What ``data_bind(compact=Footer.compact)`` does: every key but the palette's follows the footer."""
        for key in self.query(FooterKey):
            if not key.has_class("-command-palette"):
                key.compact = compact

    def bindings_changed(self, screen: Screen[object]) -> None:
        """Textual's rebuild on a change of the screen's bindings, skipped when it would compose the keys drawn."""
        if (self._drawn_plan is not None and screen.app.app_focus and self.is_attached and screen is self.screen
                and self._plan() == self._drawn_plan):
            return
        super().bindings_changed(screen)
