package speech

import "testing"

// benchReplies is a fixed mix of the replies the judge reads: short and long,
// polite and 반말, with emoji, asides and narration. The same slice is read
// before and after a change, so ns/op compares like with like.
var benchReplies = []string{
	"검을 잡아. 오늘은 손목부터 본다.",
	"저는 그렇게 생각해요. 오늘은 조금 더 쉬시는 게 좋겠어요.",
	"동생? 글쎄, 그런 얘길 들은 적 있던가",
	"오늘 실험은 여기까지 하죠. 정리는 제가 합니다.",
	"어서 오세요! 오늘은 어떤 커피로 드릴까요? 😊",
	"요즘 바깥 선거 얘기로 시끄럽더군. 다들 편을 갈라 싸운다.",
	"네.",
	"이쪽으로 와 주세요 선생님",
	"알겠습니다, 그럼 내일 다시 오고",
	"그건 내 잘못이 아니다.",
	"어서 오세요 *웃으며 고개를 숙인다*",
	"물론이죠. 제가 도와드릴게요 (속으로는 귀찮다고 생각한다)",
	"자, 이제 출발합시다!",
	"그 사람 참 성실합디다.",
	"ㅋㅋㅋ 진짜? 대박 ㅋㅋ 나도 갈래~ 내일 몇 시에 만나? 아 그리고 그거 챙겨 와.",
	"고객님, 주문하신 상품은 내일 오전 중에 도착할 예정입니다. 배송 조회는 마이페이지에서 하실 수 있습니다. 더 궁금하신 점이 있으시면 언제든지 문의해 주십시오.",
}

func benchmarkRead(b *testing.B, p *Profile) {
	n := 0
	for _, r := range benchReplies {
		n += len(r)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, r := range benchReplies {
			_ = p.Read(r)
		}
	}
}

func BenchmarkReadSeed(b *testing.B)     { benchmarkRead(b, Seed()) }
func BenchmarkReadExtended(b *testing.B) { benchmarkRead(b, Extended()) }
