"""set_ids.py IN OUT TENSOR:ROW:COLUMN=VALUE...: copies the safetensors file
IN to OUT with the given elements of its 2-D int32 tensors set (an id or a
target outside its range, for the index checks' tests). Standard library
only."""
import array
import json
import struct
import sys

data = bytearray(open(sys.argv[1], "rb").read())
(n,) = struct.unpack("<Q", data[:8])
header = json.loads(data[8 : 8 + n])
for change in sys.argv[3:]:
    place, value = change.split("=")
    name, row, column = place.split(":")
    t = header[name]
    assert t["dtype"] == "I32" and len(t["shape"]) == 2, (name, t)
    rows, columns = t["shape"]
    assert 0 <= int(row) < rows and 0 <= int(column) < columns, change
    begin = 8 + n + t["data_offsets"][0] + 4 * (int(row) * columns + int(column))
    data[begin : begin + 4] = array.array("i", [int(value)]).tobytes()
open(sys.argv[2], "wb").write(data)
