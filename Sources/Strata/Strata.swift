@_exported import StrataEngine
