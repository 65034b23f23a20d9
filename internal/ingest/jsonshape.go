package ingest

import (
	"errors"
	"fmt"
)

// Shape bounds how much structure an authenticated body may have before any
// parser or schema validator sees it. Parsers and validators spend work that
// grows faster than the body with its nesting (a 64 KB body of 32,000 nested
// arrays cost seconds of CPU), so one linear pass refuses such bodies first;
// past this pass every later step is linear in the body.
type Shape struct {
	// MaxDepth caps nesting of arrays and objects. Default 64: provider
	// payloads nest under 20 levels.
	MaxDepth int
	// MaxTokens caps values (scalars, arrays, objects) and object keys.
	// Default 1,048,576: a 1 MiB body holds at most about half as many; only
	// a large GitHub payload comes near it.
	MaxTokens int
}

func (s Shape) withDefaults() Shape {
	if s.MaxDepth <= 0 {
		s.MaxDepth = 64
	}
	if s.MaxTokens <= 0 {
		s.MaxTokens = 1 << 20
	}
	return s
}

var (
	errTooDeep      = errors.New("body nests deeper than allowed")
	errTooManyParts = errors.New("body has more JSON values than allowed")
)

// check counts nesting and tokens in one pass over the bytes, skipping the
// inside of strings. It judges structure only: whether the body is valid
// JSON is the parser's call, made after this one bounded its cost.
func (s Shape) check(body []byte) error {
	depth, tokens := 0, 0
	inToken := false // inside a scalar other than a string
	for i := 0; i < len(body); i++ {
		switch c := body[i]; c {
		case '"':
			tokens++
			inToken = false
			for i++; i < len(body) && body[i] != '"'; i++ {
				if body[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			tokens++
			inToken = false
			if depth++; depth > s.MaxDepth {
				return fmt.Errorf("%w (%d levels)", errTooDeep, s.MaxDepth)
			}
		case ']', '}':
			inToken = false
			depth--
		case ',', ':', ' ', '\t', '\n', '\r':
			inToken = false
		default:
			if !inToken {
				tokens++
				inToken = true
			}
		}
		if tokens > s.MaxTokens {
			return fmt.Errorf("%w (%d)", errTooManyParts, s.MaxTokens)
		}
	}
	return nil
}
