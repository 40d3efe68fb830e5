import StrataEngine

// The engine's types the object API names, and only those: `Durability`
// (`ModelConfiguration.durability`) and `StoreError` (a locked, corrupt or replaced file, a full
// disk: `StrataError.underlying`). The rest of the engine (`Store`, `WriteTransaction`,
// `KeyEncoding`...) is the `StrataEngine` product, for those who import it by name
// (Docs/PublicAPI.md).
@_exported import enum StrataEngine.Durability
@_exported import struct StrataEngine.StoreError
@_spi(StorageBackend) import StrataRecords

// The object API's types that live in StrataRecords, the layer under it (it has no model
// classes): an object's identifier, the object layer's error and a migration's progress.
// (The whole module: its public declarations are these three, and a scoped import of a type
// does not bring the operators it declares, such as `StrataError.Code`'s `~=`.)
@_exported import StrataRecords
