//go:build amd64 && !purego

#include "textflag.h"

// func dot4x4(a *float32, b0, b1, b2, b3 *float64, n int, out *[16]float64)
//
// Four dot products of a (float32, widened exactly with CVTPS2PD) with b0…b3
// over the first n&^3 components. Each dot keeps four partial sums, sum q
// taking the components k ≡ q (mod 4): lanes 0–1 of one SSE2 register hold
// sums 0 and 1, lanes 0–1 of another sums 2 and 3. MULPD then ADDPD rounds
// each product and each sum as the scalar loop of dot4x4Generic does, so the
// sums are the same bit for bit. out[4r+q] is partial sum q of dot r.
TEXT ·dot4x4(SB), NOSPLIT, $0-56
	MOVQ a+0(FP), SI
	MOVQ b0+8(FP), R8
	MOVQ b1+16(FP), R9
	MOVQ b2+24(FP), R10
	MOVQ b3+32(FP), R11
	MOVQ n+40(FP), CX
	MOVQ out+48(FP), DI
	XORPS X4, X4
	XORPS X5, X5
	XORPS X6, X6
	XORPS X7, X7
	XORPS X8, X8
	XORPS X9, X9
	XORPS X10, X10
	XORPS X11, X11
	SHRQ $2, CX
	JZ   done

loop:
	CVTPS2PD 0(SI), X0
	CVTPS2PD 8(SI), X1

	MOVUPD 0(R8), X2
	MOVUPD 16(R8), X3
	MULPD  X0, X2
	MULPD  X1, X3
	ADDPD  X2, X4
	ADDPD  X3, X5

	MOVUPD 0(R9), X12
	MOVUPD 16(R9), X13
	MULPD  X0, X12
	MULPD  X1, X13
	ADDPD  X12, X6
	ADDPD  X13, X7

	MOVUPD 0(R10), X2
	MOVUPD 16(R10), X3
	MULPD  X0, X2
	MULPD  X1, X3
	ADDPD  X2, X8
	ADDPD  X3, X9

	MOVUPD 0(R11), X12
	MOVUPD 16(R11), X13
	MULPD  X0, X12
	MULPD  X1, X13
	ADDPD  X12, X10
	ADDPD  X13, X11

	ADDQ $16, SI
	ADDQ $32, R8
	ADDQ $32, R9
	ADDQ $32, R10
	ADDQ $32, R11
	DECQ CX
	JNZ  loop

done:
	MOVUPD X4, 0(DI)
	MOVUPD X5, 16(DI)
	MOVUPD X6, 32(DI)
	MOVUPD X7, 48(DI)
	MOVUPD X8, 64(DI)
	MOVUPD X9, 80(DI)
	MOVUPD X10, 96(DI)
	MOVUPD X11, 112(DI)
	RET
