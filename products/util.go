package products

import "sort"

func sortStrings(s []string) { sort.Strings(s) }
