@_spi(StorageBackend) import StrataRecords
/// A section of an observer's results: the objects that share one value of its `sectionBy`
/// key path, in the results' order. Same as SwiftData's `ResultsSection` (iOS 27).
public struct ResultsSection<Element: PersistentModel, SectionTitle: Hashable>: RandomAccessCollection, Identifiable {
    /// The value of `sectionBy` the section's objects share. Same as SwiftData.
    public let title: SectionTitle
    let elements: [Element]

    /// The title: a section is identified by it. Same as SwiftData.
    public var id: SectionTitle { title }
    public var startIndex: Int { elements.startIndex }
    public var endIndex: Int { elements.endIndex }
    public subscript(position: Int) -> Element { elements[position] }
}

/// An observer's results in sections, ordered by their first appearance in the sorted results
/// (the section key path is the first sort). Same as SwiftData's `SectionedResults` (iOS 27).
public struct SectionedResults<Element: PersistentModel, SectionTitle: Hashable>: RandomAccessCollection {
    let sections: [ResultsSection<Element, SectionTitle>]
    private let byTitle: [SectionTitle: Int]

    /// Groups `elements`, in order, by `title`: a section per run of equal titles (the results
    /// are sorted by the title first, so each title has one run).
    init(_ elements: some Sequence<Element>, title: (Element) -> SectionTitle) {
        var sections: [ResultsSection<Element, SectionTitle>] = []
        var byTitle: [SectionTitle: Int] = [:]
        var run: [Element] = []
        var runTitle: SectionTitle? = nil
        func close() {
            guard let runTitle, !run.isEmpty else { return }
            if let existing = byTitle[runTitle] {
                // (Only when the sort puts one title in two runs: join them.)
                sections[existing] = ResultsSection(title: runTitle, elements: sections[existing].elements + run)
            } else {
                byTitle[runTitle] = sections.count
                sections.append(ResultsSection(title: runTitle, elements: run))
            }
        }
        for element in elements {
            let t = title(element)
            if t != runTitle { close(); run = []; runTitle = t }
            run.append(element)
        }
        close()
        self.sections = sections
        self.byTitle = byTitle
    }

    public var startIndex: Int { sections.startIndex }
    public var endIndex: Int { sections.endIndex }
    public subscript(position: Int) -> ResultsSection<Element, SectionTitle> { sections[position] }

    /// The section with this title, if any; O(1). Same as SwiftData.
    public subscript(sectionTitle title: SectionTitle) -> ResultsSection<Element, SectionTitle>? {
        byTitle[title].map { sections[$0] }
    }
}
