import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A store's file path, worked out without Foundation's `URL.path`: its first use in a process
/// made a `Set<UInt8>` inside Foundation, and the first set of a key type costs the runtime a
/// scan of every protocol conformance loaded (about 0.4M instructions, a sixth of W8's open;
/// Docs/Benchmarks.md). Every answer here equals Foundation's for the URLs a store is opened
/// with (FilePathsTests); anything else falls back to Foundation.
package enum FilePaths {
    /// `url.path`: from a `file:` URL's text, its escapes decoded.
    package static func path(of url: URL) -> String {
        let text = url.absoluteString
        guard text.utf8.starts(with: "file:///".utf8),
              !text.utf8.contains(UInt8(ascii: "?")), !text.utf8.contains(UInt8(ascii: "#")) else { return url.path }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var utf8 = text.utf8.dropFirst(7)[...]
        while let byte = utf8.popFirst() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = utf8.popFirst().flatMap(hexValue), let low = utf8.popFirst().flatMap(hexValue) else { return url.path }
            bytes.append(high << 4 | low)
        }
        // A directory URL's path has no trailing slash (but the root's).
        while bytes.count > 1 && bytes.last == UInt8(ascii: "/") { bytes.removeLast() }
        guard let path = String(validating: bytes, as: UTF8.self), !path.contains("\0") else { return url.path }
        return path
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `path` made absolute (against the working directory) with `.`, `..` and repeated
    /// slashes taken out, as `URL(filePath:).standardizedFileURL.path` does.
    package static func standardized(_ path: String) -> String {
        var absolute = path
        if !absolute.hasPrefix("/") {
            absolute = FileManager.default.currentDirectoryPath + "/" + absolute
        }
        // Bytes, not `split(separator:)` and strings: the generic `split` and its arrays of
        // substrings cost a fresh process's open about 15k instructions a call (W8), and an
        // open standardizes three paths. A component ends at a slash, so the bytes kept are
        // whole UTF-8 sequences.
        var result: [UInt8] = []
        result.reserveCapacity(absolute.utf8.count)
        var starts: [Int] = []
        var utf8 = absolute.utf8[...]
        while !utf8.isEmpty {
            let component = utf8.prefix { $0 != UInt8(ascii: "/") }
            utf8 = utf8.dropFirst(component.count + (component.count < utf8.count ? 1 : 0))
            if component.isEmpty || component.elementsEqual(".".utf8) { continue }
            if component.elementsEqual("..".utf8) {
                if let start = starts.popLast() { result.removeSubrange(start...) }
                continue
            }
            starts.append(result.count)
            result.append(UInt8(ascii: "/"))
            result.append(contentsOf: component)
        }
        return result.isEmpty ? "/" : String(decoding: result, as: UTF8.self)
    }

    /// The canonical form of a store path: absolute, and with symbolic links resolved as far as
    /// the path exists (`realpath` of the longest existing prefix). Two paths to one file give
    /// one key.
    package static func canonical(_ path: String) -> String {
        let standard = standardized(path)
        var existing = standard
        var rest: [String] = []
        while true {
            if let resolved = realPath(existing) {
                var result = resolved == "/" ? "" : resolved
                for part in rest.reversed() {
                    result += "/"
                    result += part
                }
                return result.isEmpty ? "/" : result
            }
            guard let slash = existing.lastIndex(of: "/"), existing != "/" else { return standard }
            rest.append(String(existing[existing.index(after: slash)...]))
            existing = slash == existing.startIndex ? "/" : String(existing[..<slash])
        }
    }

    private static func realPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
