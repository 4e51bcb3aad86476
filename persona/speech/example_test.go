package speech_test

import (
	"fmt"

	"evident/persona/speech"
)

// A role-play reply whose narration would read as 반말 under the seed's rule.
func ExampleProfile_Read_narration() {
	reply := "네, 알겠어요 *고개를 끄덕인다*"
	fmt.Println(speech.Seed().Read(reply).Style())
	rd := speech.Extended().Read(reply)
	fmt.Println(rd.Style(), rd.Sentences[0].Word, rd.Asides[0].Kind, rd.Asides[0].Text)
	// Output:
	// 반말
	// 존댓말 알겠어요 narration *고개를 끄덕인다*
}

// Inverted order: the polite verb first, a form of address after it.
func ExampleProfile_Read_inverted() {
	rd := speech.Extended().Read("이쪽으로 와 주세요 선생님.")
	s := rd.Sentences[0]
	fmt.Println(rd.Style(), s.LastWord, s.Word, s.Via)
	// Output: 존댓말 선생님 주세요 inverted
}

func ExampleProfile_SameFirstPerson() {
	fmt.Println(speech.Seed().SameFirstPerson("제가", "저"), speech.Extended().SameFirstPerson("제가", "저"))
	// Output: false true
}
