(* n-queens over linked lists (seed 003), the reference for the n-queens
   table. A cell holds x, y and the next cell, like the C and Mosaic cells.
   usage: nqueens N REPEAT (the solve is timed REPEAT times in-process, with
   the monotonic clock of clock.c, wall time like every other peer) *)
type l = Nil | Cons of int * int * l

external monotonic_ms : unit -> float = "mosaic_monotonic_ms"

let safe x1 y1 x2 y2 = x1 <> x2 && y1 <> y2 && x2 - x1 <> y2 - y1 && x1 - y2 <> x2 - y1

let rec filter x1 y1 = function
  | Nil -> Nil
  | Cons (x2, y2, t) ->
      let t = filter x1 y1 t in
      if safe x1 y1 x2 y2 then Cons (x2, y2, t) else t

let rec length = function Nil -> 0 | Cons (_, _, t) -> 1 + length t

let rec search n qs ps a =
  match ps with
  | Nil -> if length qs = n then a + 1 else a
  | Cons (x, y, rest) ->
      let a = search n qs rest a in
      search n (Cons (x, y, qs)) (filter x y rest) a

let () =
  let n = if Array.length Sys.argv > 1 then int_of_string Sys.argv.(1) else 8 in
  let ps = ref Nil in
  for i = n downto 1 do
    for j = n downto 1 do
      ps := Cons (i, j, !ps)
    done
  done;
  let repeat = if Array.length Sys.argv > 2 then int_of_string Sys.argv.(2) else 1 in
  let t = monotonic_ms () in
  let solutions = ref 0 in
  for _ = 1 to repeat do
    solutions := search n Nil !ps 0
  done;
  Printf.printf "TIME %.3f\n" (monotonic_ms () -. t);
  let solutions = !solutions in
  let s = Gc.quick_stat () in
  Printf.printf "RESULT {\"check\": %d, \"collections\": %d, \"minor_collections\": %d}\n" solutions
    (s.Gc.minor_collections + s.Gc.major_collections) s.Gc.minor_collections
