/// The version of Strata (the libraries and the `strata` tool, released together), and the
/// versions of the store file format it writes and reads (Docs/FileFormat.md, "File header").
///
/// ```swift
/// print("Strata \(StrataVersion.current), file format \(StrataVersion.fileFormat)")
/// ```
///
/// Strata extra: SwiftData has no version constant of its own.
public enum StrataVersion {
    /// This release of Strata, as `major.minor.patch`.
    public static let current = "0.1.0"
    /// The file format version of the stores this Strata creates and writes.
    public static var fileFormat: Int { Int(FileHeader.currentVersion) }
    /// The file format versions this Strata opens. A store of a newer version is refused with
    /// `StoreError` `.newerFormat`; one of an older version with `.olderFormat`, naming the
    /// command that converts it (`convertibleFileFormats`).
    public static var readableFileFormats: ClosedRange<Int> { Int(FileHeader.currentVersion)...Int(FileHeader.currentVersion) }
    /// The older file format versions `strata upgrade` (`Store.upgrade(path:)`) converts.
    public static var convertibleFileFormats: ClosedRange<Int> { 1...(Int(FileHeader.currentVersion) - 1) }
}
