package search_test

import (
	"fmt"

	"github.com/atrium-hq/atrium/search"
)

func ExampleParseQuery() {
	q, err := search.ParseQuery(`How do we roll back a "canary deploy" in prod*? -legacy`)
	if err != nil {
		panic(err)
	}
	for _, t := range q.Terms {
		fmt.Printf("%+v\n", t)
	}
	fmt.Printf("%+v\n", q.Retrieval())
	// Output:
	// {Text:roll Phrase:[] Prefix:false Required:false Excluded:false Forms:[]}
	// {Text:back Phrase:[] Prefix:false Required:false Excluded:false Forms:[]}
	// {Text:canar Phrase:[canar deploy] Prefix:false Required:true Excluded:false Forms:[]}
	// {Text:prod Phrase:[] Prefix:true Required:false Excluded:false Forms:[]}
	// {Text:legac Phrase:[] Prefix:false Required:false Excluded:true Forms:[]}
	// {AllOf:[] AnyOf:[] NoneOf:[legac] Phrases:[[canar deploy]] NoPhrases:[]}
}

func ExampleSnippet() {
	body := "# Releases\n\nWe ship on Tuesdays.\nA canary deploy runs for an hour before the rollout."
	q, _ := search.ParseQuery(`"canary deploy" rollout`)
	line, context := search.Snippet(body, q)
	fmt.Println(line, context)
	// Output: 4 A canary deploy runs for an hour before the rollout.
}
