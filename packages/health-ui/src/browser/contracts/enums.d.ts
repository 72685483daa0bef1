/**
 * Types of `./contracts/enums.js`: the handler serves the `@engram/contracts` enums module itself at that URL
 * (the file the contracts build emits, byte for byte), so the page has no copy of the closed enums. Nothing is
 * compiled from here; the declaration only lets `tsc` check the page against the served module.
 */
export * from '@engram/contracts/enums';
