// EnvelopeRecord: one record of a container runtime's log, its envelope
// read (input/cri_record.h, input/docker_record.h): the stream the
// container wrote it to, when the runtime read it, and whether the line it
// is part of goes on in the stream's next record (a long line is split).
#pragma once

#include <cstdint>

#include "match/envelope_fields.h"

namespace swthrottle::input {

struct EnvelopeRecord {
  match::Stream stream = match::Stream::None;
  int64_t t_ms = 0;      // the runtime's time of the record, ms since the epoch
  bool partial = false;  // more of this line follows in the stream's next record
};

}  // namespace swthrottle::input
