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
        var text = url.absoluteString
        // Over the text's bytes in place: through `utf8.dropFirst`, `popFirst` and `contains`
        // on views it cost about 18k instructions a call, 50k the first (W8 asks three times).
        let decoded = text.withUTF8 { utf8 -> String? in
            let prefix = 7   // "file://", then the path's own "/"
            guard utf8.count > prefix, utf8[0] == UInt8(ascii: "f"), utf8[1] == UInt8(ascii: "i"), utf8[2] == UInt8(ascii: "l"),
                  utf8[3] == UInt8(ascii: "e"), utf8[4] == UInt8(ascii: ":"), utf8[5] == UInt8(ascii: "/"),
                  utf8[6] == UInt8(ascii: "/"), utf8[7] == UInt8(ascii: "/") else { return nil }
            var bytes = [UInt8](repeating: 0, count: utf8.count - prefix)
            var n = 0
            var i = prefix
            while i < utf8.count {
                let byte = utf8[i]
                switch byte {
                case UInt8(ascii: "?"), UInt8(ascii: "#"), 0:
                    return nil
                case UInt8(ascii: "%"):
                    guard i + 2 < utf8.count, let high = hexValue(utf8[i + 1]), let low = hexValue(utf8[i + 2]) else { return nil }
                    let decoded = high << 4 | low
                    guard decoded != 0 else { return nil }
                    bytes[n] = decoded
                    i += 3
                default:
                    bytes[n] = byte
                    i += 1
                }
                n += 1
            }
            // A directory URL's path has no trailing slash (but the root's).
            while n > 1 && bytes[n - 1] == UInt8(ascii: "/") { n -= 1 }
            return String(validating: bytes[..<n], as: UTF8.self)
        }
        return decoded ?? url.path
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
        // open standardizes three paths; over a buffer, not the UTF-8 view's generic slices
        // (about 6k a call). A component ends at a slash, so the bytes kept are whole UTF-8
        // sequences.
        return absolute.withUTF8 { utf8 -> String in
            let slash = UInt8(ascii: "/"), dot = UInt8(ascii: ".")
            var result: [UInt8] = []
            result.reserveCapacity(utf8.count)
            var starts: [Int] = []
            var i = 0
            while i < utf8.count {
                var end = i
                while end < utf8.count && utf8[end] != slash { end += 1 }
                let count = end - i
                defer { i = end + 1 }
                if count == 0 || (count == 1 && utf8[i] == dot) { continue }
                if count == 2 && utf8[i] == dot && utf8[i + 1] == dot {
                    if let start = starts.popLast() { result.removeSubrange(start...) }
                    continue
                }
                starts.append(result.count)
                result.append(slash)
                result.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[i..<end]))
            }
            return result.isEmpty ? "/" : String(decoding: result, as: UTF8.self)
        }
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
