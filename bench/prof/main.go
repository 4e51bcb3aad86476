// Command prof runs the judge like `evident judge` (same package calls, seed
// speech profile) with profiling, to see where an end-to-end run spends its
// time and memory:
//
//	go run ./bench/prof -turns T -cards C -lexicon L [-out F] [-workers N] \
//		[-cpuprofile cpu.out] [-heapprofile heap.out]
//
// The heap profile is written when the first records reach the output, that
// is after pass 1 has built its index and before pass 2 has finished: its
// inuse_space shows what the index keeps alive for the whole of pass 2.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"

	"evident/persona/batch"
	"evident/persona/ingest"
)

func main() {
	turns := flag.String("turns", "", "chat_turn table")
	cards := flag.String("cards", "", "character_card table")
	lexicon := flag.String("lexicon", "", "topic_lexicon table")
	out := flag.String("out", "", "records file (default: discard)")
	workers := flag.Int("workers", 0, "workers (0 = GOMAXPROCS)")
	cpu := flag.String("cpuprofile", "", "write a CPU profile here")
	heap := flag.String("heapprofile", "", "write a heap profile here at the start of pass 2")
	flag.Parse()
	if err := run(*turns, *cards, *lexicon, *out, *workers, *cpu, *heap); err != nil {
		fmt.Fprintln(os.Stderr, "prof:", err)
		os.Exit(1)
	}
}

func run(turnsPath, cardsPath, lexiconPath, outPath string, workers int, cpuPath, heapPath string) error {
	var ins [3]ingest.Source
	for i, p := range []string{turnsPath, cardsPath, lexiconPath} {
		in, err := ingest.File(p)
		if err != nil {
			return err
		}
		ins[i] = in
	}
	j, _, err := batch.NewJudge(ins[1], ins[2], nil)
	if err != nil {
		return err
	}
	var w io.Writer = io.Discard
	if outPath != "" {
		f, err := os.Create(outPath)
		if err != nil {
			return err
		}
		defer f.Close()
		bw := bufio.NewWriterSize(f, 1<<16)
		defer bw.Flush()
		w = bw
	}
	if heapPath != "" {
		w = &heapAtFirstWrite{Writer: w, path: heapPath}
	}
	if cpuPath != "" {
		f, err := os.Create(cpuPath)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	tally, err := (&batch.Run{Judge: j, Turns: ins[0], Workers: workers}).Do(context.Background(), batch.Outputs{Lines: w})
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, tally)
	return nil
}

// heapAtFirstWrite writes a heap profile (after a GC) on the first Write.
type heapAtFirstWrite struct {
	io.Writer
	path string
	done bool
}

func (h *heapAtFirstWrite) Write(p []byte) (int, error) {
	if !h.done {
		h.done = true
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Fprintf(os.Stderr, "prof: at the start of pass 2: live heap %.1f MiB\n", float64(ms.HeapAlloc)/(1<<20))
		f, err := os.Create(h.path)
		if err != nil {
			return 0, err
		}
		if err := pprof.WriteHeapProfile(f); err != nil {
			f.Close()
			return 0, err
		}
		if err := f.Close(); err != nil {
			return 0, err
		}
	}
	return h.Writer.Write(p)
}
