"""The member models, registered once: every list of models is derived from here.

:func:`register` adds one :class:`~darrm.models.base.MemberModel` instance; :func:`model_of` finds
the model of a parameters object, :func:`model_for_format` the model of a γ file's format,
:func:`names` lists them (``darrm solve --members``'s choices, the docs' table).  A new member model
is one class and one :func:`register` line below (docs/contributing.md); the contract test
``tests/darrm/test_member_models.py`` then runs it end to end.
"""

from __future__ import annotations

from ..errors import ParameterError
from .base import CAPABILITIES, MemberModel
from .disjoint.model import DisjointModel
from .groups.model import GroupsModel
from .shard_groups.model import ShardGroupsModel
from .shared import SharedModel
from .weighted_shards.model import WeightedShardsModel

__all__ = ["CAPABILITIES", "MEMBER_MODELS", "MemberModel", "model_for_format", "model_named", "model_of", "names",
           "register", "round_limits"]

#: every member model, by name, in registration order
MEMBER_MODELS: dict[str, MemberModel] = {}


def register(model: MemberModel) -> MemberModel:
    """Add ``model`` to the registry.

    Raises:
        ParameterError: naming ``model``: not a MemberModel, or its name, parameters type or γ file
            format is taken.
    """
    if not isinstance(model, MemberModel):
        raise ParameterError("model", f"must be a darrm.models.MemberModel instance, got {model!r}")
    for other in MEMBER_MODELS.values():
        for what in ("name", "params_type", "gamma_format"):
            if getattr(model, what) == getattr(other, what):
                raise ParameterError("model", f"its {what} {getattr(model, what)!r} is the {other.name} model's")
    MEMBER_MODELS[model.name] = model
    return model


def round_limits() -> dict[str, int]:
    """Each registered model's round limit when ``SolveOptions.max_rounds`` is None, by name
    (:attr:`darrm.models.base.MemberModel.max_rounds`; ``darrm solve --max-rounds``'s help)."""
    return {name: model.max_rounds for name, model in MEMBER_MODELS.items()}


def names() -> tuple[str, ...]:
    """The registered models' names, in registration order."""
    return tuple(MEMBER_MODELS)


def model_named(name: object, parameter: str = "members") -> MemberModel:
    """The model called ``name``.

    Raises:
        ParameterError: naming ``parameter``, for an unknown name.
    """
    if not isinstance(name, str) or name not in MEMBER_MODELS:
        raise ParameterError(parameter, f"must be one of {', '.join(MEMBER_MODELS)}, got {name!r}")
    return MEMBER_MODELS[name]


def model_of(params: object) -> MemberModel:
    """The member model of ``params`` (by its exact type).

    Raises:
        ParameterError: naming ``params``, when it is no registered model's parameters type.
    """
    for model in MEMBER_MODELS.values():
        if type(params) is model.params_type:
            return model
    kinds = " or ".join(m.params_type.__name__ for m in MEMBER_MODELS.values())
    raise ParameterError("params", f"must be {kinds}, got {type(params).__name__}")


def model_for_format(fmt: object) -> MemberModel | None:
    """The member model whose γ files have format ``fmt``, None if none."""
    return next((m for m in MEMBER_MODELS.values() if m.gamma_format == fmt), None)


for _model in (SharedModel(), DisjointModel(), GroupsModel(), ShardGroupsModel(), WeightedShardsModel()):
    register(_model)
