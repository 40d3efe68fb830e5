import Foundation
import Testing
@testable import Strata
@_spi(StorageBackend) import StrataRecords

/// A store opened with the very models it was written with takes `LightweightMigration`'s
/// short path (`unchangedPlan`, for a fresh process's open, W8). Its plan must be the full
/// path's (`fullPlan`) wherever it answers, and it must decline every stored schema that
/// differs in any way the full path looks at.
@Suite struct UnchangedPlanTests {
    static func same(_ a: LightweightMigration.Plan, _ b: LightweightMigration.Plan) -> Bool {
        a.stored == b.stored && a.layouts.currentVersion == b.layouts.currentVersion && a.layouts.isIdentity == b.layouts.isIdentity
            && a.newUnique == b.newUnique && a.newIndexes == b.newIndexes && a.changed == b.changed
    }

    @Test func itAnswersAsTheFullPlanOrDeclines() throws {
        var answered = 0
        for model in [NotesV1.Note.self, NotesV2.Note.self, NotesUniqueTitle.Note.self, NotesRetyped.Note.self] as [any PersistentModel.Type] {
            let entity = try #require(try Schema([model]).entities(includingRelated: false).first)
            let current = StoredEntity(entity)
            var written = current
            written.layouts = [entity.properties.map(\.name)]
            // The stored schema as written, then changed in each way the full path reads.
            var variants = [written]
            var v = written; v.layouts = [["older"], entity.properties.map(\.name)]; variants.append(v)
            v = written; v.layouts = nil; variants.append(v)
            v = written; v.formerNames = [entity.properties[0].name: ["was"]]; variants.append(v)
            v = written; v.defaults = [entity.properties[0].name: Data([1])]; variants.append(v)
            v = written; v.properties[0].type = "Something else"; variants.append(v)
            v = written; v.properties[0].options ^= 1; variants.append(v)
            v = written; v.unique = [[entity.properties[0].name]]; variants.append(v)
            v = written; v.indexes = []; variants.append(v)
            v = written; v.layouts = [Array(entity.properties.map(\.name).reversed())]; variants.append(v)
            for (i, old) in variants.enumerated() {
                let fast = LightweightMigration.unchangedPlan(for: entity, current: current, old: old)
                let full = try? LightweightMigration.fullPlan(for: entity, current: current, old: old, storePath: "/tmp/x")
                if let fast {
                    answered += 1
                    let full = try #require(full, "\(entity.name) variant \(i): the full path throws where the short one answers")
                    #expect(Self.same(fast, full), "\(entity.name) variant \(i)")
                    #expect(!fast.changed && fast.layouts.isIdentity)
                }
                if i == 0 && entity.properties.allSatisfy({ $0.declaration.originalName == nil }) {
                    #expect(fast != nil, "\(entity.name): a store written with the same model takes the short path")
                }
                if old != written { #expect(fast == nil, "\(entity.name) variant \(i) differs from the schema written") }
            }
        }
        #expect(answered >= 3, "NotesV1, NotesUniqueTitle and NotesRetyped as written")
    }
}
