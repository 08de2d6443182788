"""Memory cores behind one contract (see ``base``); the registry imports the modules that register
them (``base.CORE_MODULES``) when it is first asked."""

from memrl.cores.base import CORES, MemoryCore, make, names, register, small

__all__ = ["CORES", "MemoryCore", "make", "names", "register", "small"]
