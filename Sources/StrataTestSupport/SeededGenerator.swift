// The tests' generator lives in StrataConformance, whose differential scenario draws from it
// on every kind of store; the test suites name it through this module as before.
@_exported import struct StrataConformance.SeededGenerator
