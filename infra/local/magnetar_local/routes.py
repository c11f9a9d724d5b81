"""Route matching with API Gateway HTTP API precedence, for the template's routes.

The matching itself is pure and lives in the core layer (``magnetar_core.api.route_table``),
where the function-URL front door uses it too; here it is typed for ``RouteSpec``.
"""

from __future__ import annotations

from magnetar_core.api.route_table import RouteMatch as _RouteMatch
from magnetar_core.api.route_table import RouteTable as _RouteTable
from magnetar_local.template import RouteSpec

RouteMatch = _RouteMatch[RouteSpec]
RouteTable = _RouteTable[RouteSpec]

__all__ = ["RouteMatch", "RouteTable"]
