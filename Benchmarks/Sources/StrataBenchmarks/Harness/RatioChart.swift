import Foundation

/// A bar chart (hand-written SVG) of Strata's throughput relative to each peer, per workload,
/// on a log scale: a bar to the right of 1× means Strata is faster.
struct RatioChart {
    let bench: Bench

    static let peers: [(System, String, String)] = [
        (.grdb, "vs GRDB (idiomatic)", "#4C78A8"),
        (.grdbTuned, "vs GRDB (tuned)", "#F58518"),
        (.bareFsync, "vs bare fdatasync loop / dd", "#54A24B"),
    ]

    func svg() -> String {
        let table = SummaryTable(bench: bench, totalSeconds: 0)
        var rows: [(workload: String, bars: [(label: String, color: String, ratio: Double)])] = []
        for w in table.workloadIDs {
            let bars = RatioChart.peers.compactMap { peer, label, color in
                table.speedup(w, over: peer).map { (label, color, $0) }
            }
            if !bars.isEmpty { rows.append((w, bars)) }
        }
        let ratios = rows.flatMap { $0.bars.map(\.ratio) }.filter { $0 > 0 && $0.isFinite }
        let lowExponent = floor(log2(min(0.5, (ratios.min() ?? 1) / 1.3)))
        let highExponent = ceil(log2(max(2, (ratios.max() ?? 1) * 1.3)))

        let width = 900.0, left = 230.0, right = 40.0, top = 78.0, barHeight = 16.0, barGap = 4.0, groupGap = 18.0
        let plotWidth = width - left - right
        func x(_ r: Double) -> Double { left + (log2(r) - lowExponent) / (highExponent - lowExponent) * plotWidth }
        let plotHeight = rows.reduce(0.0) { $0 + Double($1.bars.count) * (barHeight + barGap) + groupGap }
        let height = top + plotHeight + 40

        var s = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="Helvetica, Arial, sans-serif" font-size="12">
        <rect width="100%" height="100%" fill="white"/>
        <text x="\(left)" y="22" font-size="16" font-weight="bold">Strata ÷ peer: throughput, or smallness for sizes (log scale; right of 1× = Strata better)</text>
        <text x="\(left)" y="40" fill="#555">n = \(Format.count(bench.options.n)), objects = \(Format.count(bench.options.objectCount)) · \(RatioChart.escape(Machine.description))</text>

        """
        // Legend.
        var legendX = left
        for (_, label, color) in RatioChart.peers {
            s += "<rect x=\"\(legendX)\" y=\"50\" width=\"12\" height=\"12\" fill=\"\(color)\"/>"
            s += "<text x=\"\(legendX + 16)\" y=\"60\">\(RatioChart.escape(label))</text>\n"
            legendX += 200
        }
        // Grid: powers of two.
        var e = lowExponent
        while e <= highExponent {
            let r = pow(2, e)
            let gx = x(r)
            s += "<line x1=\"\(f(gx))\" y1=\"\(top - 6)\" x2=\"\(f(gx))\" y2=\"\(f(top + plotHeight))\" stroke=\"\(e == 0 ? "#000" : "#ddd")\" stroke-width=\"\(e == 0 ? 1.5 : 1)\"/>"
            let label = e >= 0 ? "\(Int(r))×" : "1/\(Int(1 / r))×"
            s += "<text x=\"\(f(gx))\" y=\"\(f(top + plotHeight + 16))\" text-anchor=\"middle\" fill=\"#555\">\(label)</text>\n"
            e += 1
        }
        var y = top
        for row in rows {
            let groupHeight = Double(row.bars.count) * (barHeight + barGap)
            s += "<text x=\"\(left - 10)\" y=\"\(f(y + groupHeight / 2 + 2))\" text-anchor=\"end\" font-weight=\"bold\">\(RatioChart.escape(row.workload))</text>\n"
            for bar in row.bars {
                let x0 = x(1), x1 = x(bar.ratio)
                s += "<rect x=\"\(f(min(x0, x1)))\" y=\"\(f(y))\" width=\"\(f(max(1, abs(x1 - x0))))\" height=\"\(f(barHeight))\" fill=\"\(bar.color)\"><title>\(RatioChart.escape(bar.label)): \(Format.ratio(bar.ratio))</title></rect>"
                let labelX = bar.ratio >= 1 ? x1 + 4 : x1 - 4
                s += "<text x=\"\(f(labelX))\" y=\"\(f(y + barHeight - 4))\" text-anchor=\"\(bar.ratio >= 1 ? "start" : "end")\">\(Format.ratio(bar.ratio))</text>\n"
                y += barHeight + barGap
            }
            y += groupGap
        }
        s += "</svg>\n"
        return s
    }

    private func f(_ v: Double) -> String { String(format: "%.1f", v) }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
