// `strata history` on a store with saves of each kind, as text and JSON, with --since.
import Foundation
import Strata
import Testing

final class Ledger: PersistentModel {
    @Attribute(.unique) var code: String = ""
    @Attribute(.preserveValueOnDeletion) var title: String = ""
    @Attribute var amount: Int = 0
    init() {}
    init(_ code: String, _ title: String, _ amount: Int) {
        self.code = code
        self.title = title
        self.amount = amount
    }
}

@Suite struct HistoryCommandTests {
    /// Three saves: two inserts (author "clerk"), an update of `amount`, a delete.
    static func ledger(at path: String) throws {
        let container = try ModelContainer(for: Ledger.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path)))
        let context = ModelContext(container)
        context.author = "clerk"
        let rent = Ledger("R", "Rent", 900)
        context.insert(rent)
        context.insert(Ledger("F", "Food", 300))
        try context.save()
        rent.amount = 950
        try context.save()
        context.delete(rent)
        try context.save()
    }

    @Test func listsEveryTransaction() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Self.ledger(at: path)
        let run = try Tool.run("history", path)
        #expect(run.status == 0, "\(run)")
        let lines = run.lines
        #expect(lines.count == 6, "\(run)")
        #expect(lines[0].hasPrefix("1  ") && lines[0].contains("author clerk") && lines[0].contains("2 changes"))
        #expect(lines[1] == "    insert Ledger rows 1-2")
        #expect(lines[3] == "    update Ledger row 1: amount")
        #expect(lines[5] == #"    delete Ledger row 1 {"title":"Rent"}"#)
    }

    @Test func jsonAndSince() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Self.ledger(at: path)
        let all = try Tool.run("history", path, "--json").objects()
        #expect(all.map { $0["token"] as? Int } == [1, 2, 3])
        let store = try #require(all.first?["store"] as? String)
        #expect(all.allSatisfy { $0["store"] as? String == store && $0["author"] as? String == "clerk" })
        let later = try Tool.run("history", path, "--since", "2@\(store)", "--json").objects()
        #expect(later.count == 1)
        let change = try #require((later.first?["changes"] as? [[String: Any]])?.first)
        #expect(change["kind"] as? String == "delete")
        #expect((change["tombstones"] as? [[String: Any]])?.first?["title"] as? String == "Rent")
        #expect(try Tool.run("history", path, "--since", "1", "--limit", "1", "--json").objects().map { $0["token"] as? Int } == [2])
        // A token of another store, and a malformed one.
        let other = try Tool.run("history", path, "--since", "1@someone-else")
        #expect(other.status == 1 && other.stderr.contains("another store"), "\(other)")
        #expect(try Tool.run("history", path, "--since", "soon").status == 2)
    }

    @Test func aPrunedTokenIsAnError() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Self.ledger(at: path)
        do {
            let context = ModelContext(try ModelContainer(for: Ledger.self, configurations: ModelConfiguration(url: URL(fileURLWithPath: path))))
            try context.deleteHistory(HistoryDescriptor<DefaultHistoryTransaction>(predicate: #Predicate { $0.transactionIdentifier < 3 }))
        }
        let run = try Tool.run("history", path, "--since", "1")
        #expect(run.status == 1 && run.stderr.contains("pruned"), "\(run)")
        #expect(try Tool.run("history", path, "--json").objects().map { $0["token"] as? Int } == [3])
    }
}
