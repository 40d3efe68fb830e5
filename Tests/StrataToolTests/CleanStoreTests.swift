// The commands on intact stores: what they print, in text and JSON, and their exit status.
import Foundation
import Strata
import StrataEngine
import Testing

@Suite struct CleanStoreTests {
    @Test func infoDescribesEntitiesIndexesAndAttributes() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Fixture.lessons(at: path, count: 40, rewrites: 1)

        let text = try Tool.run("info", path)
        #expect(text.status == 0, "\(text)")
        #expect(text.stdout.contains("file format version 2"))
        #expect(text.stdout.contains("entity Lesson: 40 objects"), "\(text)")
        // Columns are padded to fit; compare with single spaces.
        let lines = text.lines.map { $0.split(separator: " ").joined(separator: " ") }
        for expected in ["unique:id unique", "index:startsAt", "id UUID unique", "attachment Data externalStorage", "minutes Int", "price Decimal", "startsAt Date",
                         "tags [String]", "place Place?", "note String?", "scores [String: Int]", "level Level", "rating Float"] {
            #expect(lines.contains(expected), "'\(expected)' missing from\n\(text.stdout)")
        }

        let json = try Tool.run("info", path, "--json").object()
        #expect(json["format_version"] as? Int == 2)
        #expect(json["schema"] as? Bool == true)
        #expect((json["file_size"] as? Int ?? 0) > 0)
        #expect((json["last_commit"] as? Int ?? 0) >= 3)
        #expect((json["reclaimable_bytes"] as? Int ?? 0) > 0, "a rewrite leaves superseded records")
        let collections = try #require(json["collections"] as? [[String: Any]])
        let lesson = try #require(collections.first { $0["name"] as? String == "Lesson" })
        #expect(lesson["count"] as? Int == 40)
        let indexes = try #require(lesson["indexes"] as? [[String: Any]])
        #expect(indexes.contains { $0["name"] as? String == "unique:id" && $0["unique"] as? Bool == true })
        let attributes = try #require(lesson["attributes"] as? [[String: Any]])
        #expect(attributes.map { $0["name"] as? String } == ["id", "title", "minutes", "price", "startsAt", "published", "tags",
                                                              "level", "place", "note", "attachment", "link", "scores", "rating"])
        #expect(attributes.first?["options"] as? [String] == ["unique"])
        #expect(attributes.first { $0["name"] as? String == "note" }?["type"] as? String == "String?")
    }

    @Test func verifyPassesAnIntactStore() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Fixture.lessons(at: path, count: 60, rewrites: 2)

        let text = try Tool.run("verify", path)
        #expect(text.status == 0, "\(text)")
        #expect(text.stdout.contains("clean"), "\(text)")
        #expect(text.stdout.contains("60 objects decoded with the stored schema"), "\(text)")
        #expect(text.stderr.isEmpty, "no progress bar when standard error is not a terminal")

        let json = try Tool.run("verify", path, "--json").object()
        #expect(json["clean"] as? Bool == true)
        #expect((json["problems"] as? [Any])?.isEmpty == true)
        #expect(json["records"] as? Int == 63, "60 objects and a history record per save")
        #expect(json["objects_decoded"] as? Int == 60)
        #expect((json["commits"] as? Int ?? 0) >= 4)
    }

    @Test func dumpDecodesEveryKindOfValue() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Fixture.lessons(at: path, count: 12)

        let run = try Tool.run("dump", path)
        #expect(run.status == 0, "\(run)")
        let objects = try run.objects()
        #expect(objects.count == 12)
        // Keys in declaration order, after the entity and row id.
        #expect(run.lines[0].hasPrefix(#"{"_entity":"Lesson","_row":1,"id":"00000000-0000-4000-8000-000000000000","title":"Lesson 0""#), "\(run.lines[0])")
        let two = try #require(objects.first { $0["title"] as? String == "Lesson 2" })
        #expect(two["id"] as? String == Lesson.id(2).uuidString)
        #expect(two["minutes"] as? Int == 32)
        #expect((two["price"] as? NSNumber)?.doubleValue == 2.25)
        #expect(two["startsAt"] as? String == "2023-11-15T00:13:20.000Z")
        #expect(two["published"] as? Bool == true)
        #expect(two["tags"] as? [String] == ["t2", "all"])
        #expect(two["level"] as? String == "beginner")
        let place = try #require(two["place"] as? [String: Any])
        #expect(place["city"] as? String == "Lisboa" && place["floor"] as? Int == 2 && place.count == 2)
        #expect(two["note"] as? String == "bring \"paper\"\nand a pen")
        #expect(two["attachment"] as? String == Data([2, 1, 2]).base64EncodedString())
        #expect(two["link"] as? String == "https://example.com/lessons/2")
        #expect(two["scores"] as? [String: Int] == ["a": 2, "b": -2])
        #expect((two["rating"] as? NSNumber)?.doubleValue == 4.5)
        let four = try #require(objects.first { $0["title"] as? String == "Lesson 4" })
        #expect(four["place"] is NSNull)
        let three = try #require(objects.first { $0["title"] as? String == "Lesson 3" })
        #expect(three["note"] is NSNull)
        let blob = try #require((three["attachment"] as? [String: Any])?["_blob"] as? Int, "\(three)")
        #expect(blob > 0)

        let inlined = try Tool.run("dump", path, "--blobs", "--where", "title=Lesson 3").objects()
        #expect(inlined.map { $0["attachment"] as? String } == [Data(repeating: 3, count: 40).base64EncodedString()])
    }

    @Test func dumpSelectsByEntityFieldAndLimit() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Fixture.lessons(at: path, count: 30)

        let byTitle = try Tool.run("dump", path, "--entity", "Lesson", "--where", "title=Lesson 7")
        #expect(byTitle.status == 0, "\(byTitle)")
        #expect(try byTitle.objects().map { $0["minutes"] as? Int } == [37])

        let byNumberAndBool = try Tool.run("dump", path, "--where", "minutes=40", "--where", "published=true")
        #expect(try byNumberAndBool.objects().map { $0["title"] as? String } == ["Lesson 10"])
        let byElement = try Tool.run("dump", path, "--where", "tags=t1", "--limit", "3")
        #expect(try byElement.objects().map { $0["title"] as? String } == ["Lesson 1", "Lesson 4", "Lesson 7"])
        let byNull = try Tool.run("dump", path, "--where=place=null", "--limit=2")
        #expect(try byNull.objects().map { $0["title"] as? String } == ["Lesson 0", "Lesson 4"])
        let byID = try Tool.run("dump", path, "--where", "id=\(Lesson.id(5).uuidString.lowercased())")
        #expect(try byID.objects().map { $0["title"] as? String } == ["Lesson 5"])
        let byRow = try Tool.run("dump", path, "--where", "_row=3")
        #expect(try byRow.objects().map { $0["title"] as? String } == ["Lesson 2"])
        let none = try Tool.run("dump", path, "--where", "title=nothing")
        #expect(none.status == 0 && none.stdout.isEmpty, "\(none)")

        let unknownEntity = try Tool.run("dump", path, "--entity", "Trip")
        #expect(unknownEntity.status == 1, "\(unknownEntity)")
        #expect(unknownEntity.stderr.contains("no entity or collection named 'Trip' (it has: Lesson)"), "\(unknownEntity)")
        let unknownField = try Tool.run("dump", path, "--where", "colour=red")
        #expect(unknownField.status == 1, "\(unknownField)")
        #expect(unknownField.stderr.contains("no selected entity has an attribute 'colour'"), "\(unknownField)")
    }

    @Test func compactReclaimsSpaceAndKeepsEveryObject() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Fixture.lessons(at: path, count: 80, rewrites: 3)
        let before = try Tool.run("dump", path)
        let reclaimable = try Tool.run("info", path, "--json").object()["reclaimable_bytes"] as? Int ?? 0
        #expect(reclaimable > 0)

        let json = try Tool.run("compact", path, "--json")
        #expect(json.status == 0, "\(json)")
        let report = try json.object()
        let bytesBefore = try #require(report["bytes_before"] as? Int)
        let bytesAfter = try #require(report["bytes_after"] as? Int)
        #expect(bytesAfter < bytesBefore)
        #expect(report["bytes_reclaimed"] as? Int == bytesBefore - bytesAfter)
        #expect(report["records"] as? Int == 84, "80 objects and a history record per save")
        #expect(try Fixture.size(of: path) == UInt64(bytesAfter))

        #expect(try Tool.run("verify", path).status == 0)
        #expect(try Tool.run("dump", path).stdout == before.stdout, "compaction changed no object")
        let text = try Tool.run("compact", path)
        #expect(text.status == 0, "\(text)")
        #expect(text.stdout.contains("reclaimed"), "\(text)")
        #expect(text.stdout.contains("84 records copied"), "\(text)")
    }

    @Test func relationshipsAreRelatedRowIDs() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Fixture.shelves(at: path)

        let shelves = try Tool.run("dump", path, "--entity", "Shelf").objects()
        #expect(shelves.map { $0["label"] as? String } == ["first", "empty"])
        #expect(shelves.map { $0["volumes"] as? [Int] } == [[1, 2, 3], []])
        let volumes = try Tool.run("dump", path, "--entity", "Volume").objects()
        #expect(volumes.map { $0["title"] as? String } == ["A", "B", "C"])
        #expect(volumes.map { $0["shelf"] as? Int } == [1, 1, 1])
        let info = try Tool.run("info", path)
        let lines = info.lines.map { $0.split(separator: " ").joined(separator: " ") }
        #expect(lines.contains("volumes [Volume] (relationship)"), "\(info)")
        #expect(lines.contains("shelf Shelf? (relationship)"), "\(info)")
        #expect(try Tool.run("verify", path).status == 0)
    }

    /// Records written before a lightweight migration keep their layout: dump says which, and
    /// shows the renamed property under its new name and the added one's stored default.
    @Test func recordsOfOlderLayouts() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Fixture.migratedMemos(at: path)

        let lines = try Tool.run("dump", path).lines
        #expect(lines == [#"{"_entity":"Memo","_row":1,"_layout":0,"title":"old 1","text":"a","priority":3}"#,
                          #"{"_entity":"Memo","_row":2,"_layout":0,"title":"old 2","text":"b","priority":3}"#,
                          #"{"_entity":"Memo","_row":3,"title":"new","text":"c","priority":1}"#])
        let verify = try Tool.run("verify", path)
        #expect(verify.status == 0, "\(verify)")
        #expect(verify.stdout.contains("3 objects decoded"), "\(verify)")
    }

    @Test func storesWithoutASchemaShowTheirRecords() throws {
        let folder = try TestFolder()
        let path = folder.path()
        try Fixture.engineOnly(at: path)

        let info = try Tool.run("info", path)
        #expect(info.status == 0, "\(info)")
        #expect(info.stdout.contains("none (a StrataEngine store)"), "\(info)")
        #expect(info.stdout.contains("collection notes: 5 records"), "\(info)")
        let dump = try Tool.run("dump", path, "--where", "_row=2")
        #expect(dump.status == 0, "\(dump)")
        #expect(try dump.objects().map { $0["_bytes"] as? String } == [Data("note 2".utf8).base64EncodedString()])
        let verify = try Tool.run("verify", path)
        #expect(verify.status == 0, "\(verify)")
    }

    @Test func demoThenInspect() throws {
        let folder = try TestFolder()
        let path = folder.path("demo.store")
        let demo = try Tool.run("demo", "--path", path, "--count", "60")
        #expect(demo.status == 0, "\(demo)")
        #expect(demo.stdout.contains("60 courses survived the reopen"), "\(demo)")
        let info = try Tool.run("info", path, "--json").object()
        let course = try #require((info["collections"] as? [[String: Any]])?.first)
        #expect(course["name"] as? String == "Course")
        #expect(course["count"] as? Int == 60)
        #expect(try Tool.run("verify", path).status == 0)
    }

    @Test func benchPrintsOneJSONLinePerWorkloadAndLevel() throws {
        let folder = try TestFolder()
        let run = try Tool.run("bench", "--n", "300", "--path", folder.url.path)
        #expect(run.status == 0, "\(run)")
        let lines = try run.objects()
        let expected = ["bulk_insert", "point_fetch", "count_where", "sorted_page", "enumerate"]
        #expect(lines.map { $0["workload"] as? String } == expected + expected)
        #expect(lines.map { $0["system"] as? String } == Array(repeating: "StrataEngine", count: 5) + Array(repeating: "Strata", count: 5))
        for line in lines {
            #expect(line["n"] as? Int == 300)
            #expect((line["seconds"] as? NSNumber)?.doubleValue ?? -1 >= 0)
            #expect(line["ops_per_sec"] != nil && line["fsyncs"] != nil && line["peak_rss_kb"] != nil)
        }
        // Both levels see the same data, so they agree on the answers.
        let matches = lines.filter { $0["workload"] as? String == "count_where" }.map { $0["matches"] as? Int }
        #expect(matches.count == 2 && matches[0] == matches[1] && (matches[0] ?? 0) > 0)
        #expect(lines.filter { $0["workload"] as? String == "point_fetch" }.allSatisfy { $0["found"] as? Int == 300 })
        // --path keeps the stores, and they are sound.
        #expect(try Tool.run("verify", folder.path("engine.store")).status == 0)
        #expect(try Tool.run("verify", folder.path("objects.store")).status == 0)
    }
}
