import StrataEngine

// The engine's types the object API names, and only those: `Durability`
// (`ModelConfiguration.durability`) and `StoreError` (a locked, corrupt or replaced file, a full
// disk: `StrataError.underlying`). The rest of the engine (`Store`, `WriteTransaction`,
// `KeyEncoding`...) is the `StrataEngine` product, for those who import it by name
// (Docs/PublicAPI.md).
@_exported import enum StrataEngine.Durability
@_exported import struct StrataEngine.StoreError
