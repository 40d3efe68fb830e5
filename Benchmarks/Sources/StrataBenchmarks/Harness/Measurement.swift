import Foundation

/// A value in a measurement's JSON line.
enum JSONValue: Sendable, CustomStringConvertible {
    case int(Int)
    case double(Double)
    case string(String)
    case null

    var description: String {
        switch self {
        case .int(let v): return String(v)
        case .double(let v):
            guard v.isFinite else { return "null" }
            // Enough digits for microsecond timings, without noise.
            return v == v.rounded() && abs(v) < 1e15 ? String(Int(v)) : String(format: "%.9g", v)
        case .string(let s): return JSONValue.quote(s)
        case .null: return "null"
        }
    }

    var doubleValue: Double? {
        switch self {
        case .int(let v): return Double(v)
        case .double(let v): return v
        default: return nil
        }
    }

    static func quote(_ s: String) -> String {
        var out = "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// One measurement: one workload run by one system. Printed as one JSON line.
struct Measurement: Sendable {
    /// The workload's id, such as "E1" or "E3-range".
    var workload: String
    /// `strata-engine`, `grdb`, `grdb-tuned` or `bare-fsync`.
    var system: String
    /// Operations (records, lookups, commits) the time covers.
    var n: Int
    /// Wall-clock seconds for the `n` operations (the median when repeated).
    var seconds: Double
    /// The process's peak resident set (VmHWM) during the workload, in KiB.
    var peakRSSKB: Int?
    /// The size on disk of what the workload left (store or database file), in bytes.
    var bytes: Int?
    /// Counts and details beside the time (fsyncs, bytes written, repetitions...), in order.
    var extras: [(String, JSONValue)] = []

    var opsPerSecond: Double { seconds > 0 ? Double(n) / seconds : 0 }

    subscript(key: String) -> JSONValue? {
        get { extras.first { $0.0 == key }?.1 }
        set {
            if let i = extras.firstIndex(where: { $0.0 == key }) {
                if let newValue { extras[i].1 = newValue } else { extras.remove(at: i) }
            } else if let newValue {
                extras.append((key, newValue))
            }
        }
    }

    var jsonLine: String {
        var fields: [(String, JSONValue)] = [
            ("workload", .string(workload)), ("system", .string(system)), ("n", .int(n)),
            ("seconds", .double(seconds)), ("ops_per_sec", .double(opsPerSecond.rounded())),
            ("peak_rss_kb", peakRSSKB.map(JSONValue.int) ?? .null), ("bytes", bytes.map(JSONValue.int) ?? .null),
        ]
        fields += extras
        return "{" + fields.map { "\(JSONValue.quote($0.0)): \($0.1)" }.joined(separator: ", ") + "}"
    }

    init(workload: String, system: String, n: Int, seconds: Double, peakRSSKB: Int? = nil, bytes: Int? = nil,
         extras: [(String, JSONValue)] = []) {
        self.workload = workload
        self.system = system
        self.n = n
        self.seconds = seconds
        self.peakRSSKB = peakRSSKB
        self.bytes = bytes
        self.extras = extras
    }

    /// Parses a line printed by `jsonLine` (a child process's report).
    init?(jsonLine line: String) {
        guard let data = line.data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let workload = object["workload"] as? String, let system = object["system"] as? String,
              let n = (object["n"] as? NSNumber)?.intValue, let seconds = (object["seconds"] as? NSNumber)?.doubleValue
        else { return nil }
        self.init(workload: workload, system: system, n: n, seconds: seconds,
                  peakRSSKB: (object["peak_rss_kb"] as? NSNumber)?.intValue, bytes: (object["bytes"] as? NSNumber)?.intValue)
        let known: Set = ["workload", "system", "n", "seconds", "ops_per_sec", "peak_rss_kb", "bytes"]
        // Keep the extras in the order the line gives them.
        func position(_ key: String) -> Int {
            line.range(of: JSONValue.quote(key) + ":").map { line.distance(from: line.startIndex, to: $0.lowerBound) } ?? Int.max
        }
        for key in object.keys.sorted(by: { position($0) < position($1) }) where !known.contains(key) {
            switch object[key] {
            case let s as String: extras.append((key, .string(s)))
            case let number as NSNumber:
                let d = number.doubleValue
                extras.append((key, d == d.rounded() && abs(d) < 1e15 ? .int(Int(d)) : .double(d)))
            default: extras.append((key, .null))
            }
        }
    }
}
