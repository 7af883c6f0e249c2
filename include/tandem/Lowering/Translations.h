//===- Translations.h - a module's code through a target --------*- C++ -*-===//
//
// tandem-translate's translations, through the target registry: the source
// a target writes for a module's functions and fragments
// (--tandem-to-source), and the library it compiles from it
// (--tandem-to-library). The tool writes the output; nothing here writes a
// file but the target's compile cache.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LOWERING_TRANSLATIONS_H
#define TANDEM_LOWERING_TRANSLATIONS_H

namespace tandem::lowering {

/// Registers the translations with their options (--target and every
/// registered target's options). Call once, after the targets are
/// registered and before the command line is parsed.
void registerTargetTranslations();

} // namespace tandem::lowering

#endif // TANDEM_LOWERING_TRANSLATIONS_H
