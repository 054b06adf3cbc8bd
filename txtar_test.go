// txtar_test.go adapts the golden tests to the txtar helpers in internal/txtar.

package tracemem

import "github.com/tracemem/tracemem/internal/txtar"

type txtarFile = txtar.File

func parseTxtar(data []byte) (comment []byte, files []txtarFile) { return txtar.Parse(data) }

func formatTxtar(comment []byte, files []txtarFile) []byte { return txtar.Format(comment, files) }

func txtarGet(files []txtarFile, name string) ([]byte, bool) { return txtar.Get(files, name) }
