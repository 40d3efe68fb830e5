import Testing
@Test func placeholder() {}
