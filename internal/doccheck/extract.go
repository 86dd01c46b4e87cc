package doccheck

import (
	"strings"
)

// Command is one command a document shows.
type Command struct {
	Doc  string // the document, relative to the repository
	Line int    // its line in the document, from 1
	Text string // the command as a shell reads it, without its comment
	// Expect is the output a transcript ("$ command" then its output)
	// quotes under the command; nil where the document quotes none.
	Expect []string
	// Block counts the fenced blocks of the document, from 0; the block
	// the command is in.
	Block int
}

// Block is one fenced block of a document.
type Block struct {
	Lang  string   // the word after the opening fence: sh, or empty
	Line  int      // the line of its first content line, from 1
	Lines []string // its content
}

// Blocks returns the fenced blocks of a Markdown document, in order.
func Blocks(md string) []Block {
	var out []Block
	var cur *Block
	for i, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") {
			if cur == nil {
				cur = &Block{Lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```")), Line: i + 2}
			} else {
				out = append(out, *cur)
				cur = nil
			}
			continue
		}
		if cur != nil {
			cur.Lines = append(cur.Lines, line)
		}
	}
	return out
}

// Commands returns the commands of one document: each command of its sh
// blocks, and each "$ command" of its other blocks with the lines quoted
// under it.
func Commands(doc, md string) []Command {
	var out []Command
	for bi, b := range Blocks(md) {
		if b.Lang == "sh" {
			out = append(out, shellCommands(doc, bi, b)...)
			continue
		}
		out = append(out, transcriptCommands(doc, bi, b)...)
	}
	return out
}

// shellCommands splits an sh block into commands: continued lines joined,
// comments dropped, each line split at ; and &&.
func shellCommands(doc string, bi int, b Block) []Command {
	var out []Command
	for i := 0; i < len(b.Lines); i++ {
		start := i
		line := StripComment(b.Lines[i])
		for strings.HasSuffix(line, "\\") && i+1 < len(b.Lines) {
			i++
			line = strings.TrimSuffix(line, "\\") + " " + strings.TrimSpace(StripComment(b.Lines[i]))
		}
		line = strings.Join(strings.Fields(line), " ")
		for _, seg := range Split(line) {
			out = append(out, Command{Doc: doc, Line: b.Line + start, Text: seg, Block: bi})
		}
	}
	return out
}

// transcriptCommands reads "$ command" lines and the output under each.
func transcriptCommands(doc string, bi int, b Block) []Command {
	var out []Command
	for i, line := range b.Lines {
		if rest, ok := strings.CutPrefix(line, "$ "); ok {
			out = append(out, Command{Doc: doc, Line: b.Line + i, Text: strings.TrimSpace(rest), Expect: []string{}, Block: bi})
			continue
		}
		if len(out) > 0 {
			out[len(out)-1].Expect = append(out[len(out)-1].Expect, line)
		}
	}
	return out
}

// StripComment drops a shell comment: from a # at the start of the line
// or after a space, outside quotes, to the end of the line.
func StripComment(line string) string {
	quote := rune(0)
	prev := ' '
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (prev == ' ' || prev == '\t'):
			return strings.TrimRight(line[:i], " \t")
		}
		prev = r
	}
	return strings.TrimRight(line, " \t")
}

// Split splits a command line at ; and && outside quotes and drops empty
// commands.
func Split(line string) []string {
	var out []string
	quote := byte(0)
	start := 0
	add := func(end int) {
		if s := strings.TrimSpace(line[start:end]); s != "" {
			out = append(out, s)
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == ';':
			add(i)
			start = i + 1
		case c == '&' && i+1 < len(line) && line[i+1] == '&':
			add(i)
			start = i + 2
			i++
		}
	}
	add(len(line))
	return out
}

// Matches says whether output holds the quoted lines in order. A quoted
// line "..." stands for any lines; a quoted line ending in "..." matches a
// line that begins with what comes before it; trailing spaces do not
// count. It returns the first quoted line not found.
func Matches(quoted []string, output string) (missing string, ok bool) {
	got := strings.Split(output, "\n")
	j := 0
	for _, q := range quoted {
		q = strings.TrimRight(q, " \t")
		if q == "..." || q == "" {
			continue
		}
		prefix, isPrefix := strings.CutSuffix(q, "...")
		prefix = strings.TrimRight(prefix, " ")
		found := false
		for ; j < len(got); j++ {
			g := strings.TrimRight(got[j], " \t")
			if g == q || (isPrefix && strings.HasPrefix(g, prefix)) {
				found = true
				j++
				break
			}
		}
		if !found {
			return q, false
		}
	}
	return "", true
}
