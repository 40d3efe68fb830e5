import StrataEngine
import Foundation

let path = "/tmp/smoke.store"
try? FileManager.default.removeItem(atPath: path)
try? FileManager.default.removeItem(atPath: path + ".blobs")
var store: Store? = try Store(path: path)
let n = 200_000
var t = Date()
let (users, byName, byAge) = try store!.write { tx -> (CollectionID, IndexID, IndexID) in
    let users = try tx.createCollection(named: "users")
    let byName = try tx.createIndex(named: "name", on: users, unique: true)
    let byAge = try tx.createIndex(named: "age", on: users, unique: false)
    for i in 0..<n {
        let row = try tx.allocateRowID(in: users)
        try tx.put(Array("user \(i) with some payload text here".utf8), row: row, in: users,
                   indexKeys: [IndexKey(byName, KeyEncoding.encode("user\(i)")), IndexKey(byAge, KeyEncoding.encode(i % 100))])
    }
    return (users, byName, byAge)
}
print("insert", Date().timeIntervalSince(t), try store!.info().fileSize)
t = Date()
try store!.read { tx in
    var found = 0
    for i in stride(from: 0, to: n, by: 7) {
        if let row = try tx.lookup(KeyEncoding.encode("user\(i)"), in: byName), let rec = try tx.record(row, in: users) { found += rec.count > 0 ? 1 : 0 }
    }
    print("lookups", found, Date().timeIntervalSince(t))
    print("age 42 count", try tx.countEntries(in: byAge, range: .exact(KeyEncoding.encode(42))))
    var c = try tx.entries(in: byAge, range: KeyRange(lower: KeyEncoding.encode(97)), reverse: true)
    var k = 0; var last: RowID = 0
    while let e = try c.next() { if k < 3 { print(KeyComponent.decode(e.key)!, e.row) }; last = e.row; k += 1 }
    print("reverse >=97:", k, last)
}
try store!.write { tx in
    for r in stride(from: 1, through: RowID(n), by: 2) { try tx.delete(r, in: users) }
}
print("after delete", try store!.read { try $0.count(in: users) })
let v = try store!.verify()
print(v)
let rep = try store!.compact()
print("compact", rep)
print(try store!.verify())
store = nil
let s2 = try Store(path: path)
print("reopen count", try s2.read { try $0.count(in: users) }, s2.statistics)
try s2.write { tx in let b = try tx.putBlob(Array(repeating: 7, count: 100_000)); print(b) }
print(try s2.verify())
