import Testing
import Strata

@Test func strataReExportsTheEngine() {
    #expect(KeyEncoding.encode(1).count == 9)
}
