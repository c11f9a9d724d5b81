"""Schema registry (issue 15): a topic's schema versions on Pulsar's admin paths
(``registry``), the namespace's schema policies (``policies``) and the schemas producers and
consumers declare when they are created (``Schemas.declare``)."""

from magnetar_core.services.schemas.policies import SchemaPolicies
from magnetar_core.services.schemas.registry import Schemas

__all__ = ["SchemaPolicies", "Schemas"]
