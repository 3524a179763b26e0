// Package jsonscan walks JSON that internal/strictjson has already accepted,
// without decoding it: where a value ends, the members of an object, the
// text of a string. mcp's message decoder, the proxy's splicing of raw
// messages (runtime) and the lock's canonicalizer all need exactly this, so
// it is written once, here. On input strictjson would refuse the results are
// meaningless (but never a panic or an endless loop).
package jsonscan
