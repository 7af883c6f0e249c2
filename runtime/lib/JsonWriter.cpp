//===- JsonWriter.cpp - JSON text with chosen one-line parts --------------===//

#include "tandem/Runtime/JsonWriter.h"

#include <charconv>
#include <cmath>

using namespace tandem::io;

std::string tandem::io::jsonQuote(const std::string &text) {
  static const char hex[] = "0123456789abcdef";
  std::string quoted = "\"";
  for (unsigned char c : text) {
    switch (c) {
    case '"':
      quoted += "\\\"";
      break;
    case '\\':
      quoted += "\\\\";
      break;
    case '\n':
      quoted += "\\n";
      break;
    case '\t':
      quoted += "\\t";
      break;
    case '\r':
      quoted += "\\r";
      break;
    default:
      if (c < 0x20) {
        quoted += "\\u00";
        quoted += hex[c >> 4];
        quoted += hex[c & 15];
      } else {
        quoted += static_cast<char>(c);
      }
    }
  }
  return quoted + "\"";
}

void JsonWriter::newline(size_t depth) {
  out += '\n';
  out.append(2 * depth, ' ');
}

void JsonWriter::element() {
  if (afterKey) {
    afterKey = false;
    return;
  }
  if (frames.empty())
    return;
  Frame &frame = frames.back();
  if (frame.count++)
    out += ',';
  if (!frame.oneLine)
    newline(frames.size());
}

void JsonWriter::begin(char open) {
  element();
  bool oneLine = nextOneLine || (!frames.empty() && frames.back().oneLine);
  nextOneLine = false;
  frames.push_back({oneLine, 0});
  out += open;
}

void JsonWriter::end(char close) {
  Frame frame = frames.back();
  frames.pop_back();
  if (frame.count && !frame.oneLine)
    newline(frames.size());
  out += close;
  if (frames.empty())
    out += '\n';
}

void JsonWriter::key(const std::string &name) {
  element();
  out += jsonQuote(name);
  out += frames.back().oneLine ? ":" : ": ";
  afterKey = true;
}

void JsonWriter::value(const std::string &text) {
  element();
  out += jsonQuote(text);
}

void JsonWriter::value(int64_t number) {
  element();
  out += std::to_string(number);
}

void JsonWriter::value(uint64_t number) {
  element();
  out += std::to_string(number);
}

void JsonWriter::value(double number) {
  element();
  if (!std::isfinite(number)) {
    out += "null";
    return;
  }
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), number);
  out.append(buffer, result.ptr);
}

void JsonWriter::value(bool flag) {
  element();
  out += flag ? "true" : "false";
}

void JsonWriter::integers(const std::vector<int64_t> &numbers) {
  oneLine().beginArray();
  for (int64_t number : numbers)
    value(number);
  endArray();
}

void JsonWriter::strings(const std::vector<std::string> &texts) {
  oneLine().beginArray();
  for (const std::string &text : texts)
    value(text);
  endArray();
}
