//===- PhiloxTest.cpp - Philox4x32-10 known answers -----------------------===//

#include "tandem/Runtime/Philox.h"

#include <gtest/gtest.h>

using namespace tandem::rng;

// Known-answer vectors published with the Random123 library.
TEST(Philox, KnownAnswerZeros) {
  PhiloxCounter out = philox4x32({0, 0, 0, 0}, {0, 0});
  EXPECT_EQ(
      out, (PhiloxCounter{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
}

TEST(Philox, KnownAnswerOnes) {
  PhiloxCounter out =
      philox4x32({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu},
                 {0xffffffffu, 0xffffffffu});
  EXPECT_EQ(
      out, (PhiloxCounter{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
}

TEST(Philox, KnownAnswerPi) {
  PhiloxCounter out =
      philox4x32({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u},
                 {0xa4093822u, 0x299f31d0u});
  EXPECT_EQ(
      out, (PhiloxCounter{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(Philox, UniformFromBitsRange) {
  EXPECT_EQ(uniformFromBits(0), 0.0f);
  EXPECT_LT(uniformFromBits(0xffffffffu), 1.0f);
  EXPECT_EQ(uniformFromBits(0x80000000u), 0.5f);
}
