//===- Writers.h - Trace and SVG views of a simulated schedule --*- C++ -*-===//

#ifndef TANDEM_SCHEDULE_WRITERS_H
#define TANDEM_SCHEDULE_WRITERS_H

#include "tandem/Schedule/Simulator.h"

namespace tandem::schedule {

/// Chrome / Perfetto trace JSON: one process, one thread (track) per rank,
/// one complete ("X") event per action. One simulator time unit is written
/// as 1000 trace microseconds (1 ms), so durations read as time units.
void writeTrace(const Schedule &schedule, const SimulationReport &report,
                llvm::raw_ostream &os);

/// An SVG timeline: ranks as rows, one box per action coloured by kind
/// (F, B, BI, BW, SEND/RECV) with the microbatch number inside (and the
/// chunk, as c:i, when there are several), a time axis and a legend.
void writeSVG(const Schedule &schedule, const SimulationReport &report,
              llvm::raw_ostream &os);

} // namespace tandem::schedule

#endif // TANDEM_SCHEDULE_WRITERS_H
