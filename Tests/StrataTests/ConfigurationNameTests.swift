import Foundation
import Testing
@testable import Strata

/// A configuration made with a URL and no name is named after the file, as Foundation's
/// `url.deletingPathExtension().lastPathComponent` names it (SwiftData's rule), though Strata
/// works it out from the path itself: the first use of those URL operations cost a fresh
/// process about 0.45M instructions (W8, Docs/Benchmarks.md).
@Suite struct ConfigurationNameTests {
    static let paths = [
        "/tmp/x/objects.strata", "/tmp/x/objects", "/tmp/x/archive.tar.gz", "/tmp/x/.hidden",
        "/tmp/x/.hidden.strata", "/tmp/x/dir/", "/tmp/x/dir//", "/tmp/x/a.", "/tmp/x/..", "/tmp/x/.",
        "/tmp/x/with space.strata", "/tmp/x/Zürich ✓.store", "/tmp/x/a.b/c", "/", "/store.strata",
        "relative/name.strata", "name.strata", "/tmp/x/..strata", "/tmp/x/a..b", "/tmp/x/...", "/tmp/x/a.b.",
        "//", "/tmp/x/é.strata/", "/tmp/x/cafe\u{301}.\u{301}strata", "/tmp/x/a\r\n.b",
    ]

    @Test(arguments: paths)
    func nameFollowsFoundation(path: String) {
        let url = URL(fileURLWithPath: path)
        #expect(ModelConfiguration.storeName(of: url) == url.deletingPathExtension().lastPathComponent, "\(path)")
        #expect(ModelConfiguration(url: url).name == url.deletingPathExtension().lastPathComponent)
    }
}
