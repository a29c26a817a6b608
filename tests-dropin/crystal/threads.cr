# Crystal's multi-threaded runtime (-Dpreview_mt) on the drop-in: fibers
# spread over CRYSTAL_WORKERS threads allocate, share a mutex-guarded hash
# and send results over channels, while collections stop every worker
# (its start callback and push-other-roots procedure set each thread's
# stack bottom to its running fiber's). Each line is a checked result.
def build(n : Int32, seed : Int32) : Array(Array(Int32))
  Array.new(n) { |i| Array.new(8) { |j| i * j + seed } }
end

results = Channel(Int64).new
shared = {} of Int32 => String
lock = Mutex.new
fibers = 64
fibers.times do |f|
  spawn do
    acc = 0_i64
    200.times do |r|
      rows = build(100, f + r)
      acc += rows.sum { |row| row.sum.to_i64 }
      lock.synchronize { shared[f * 1000 + r] = "f#{f}r#{r}" } if r % 10 == 0
      Fiber.yield if r % 20 == 0
    end
    results.send acc
  end
end
total = 0_i64
fibers.times { total += results.receive }
puts "threads: #{total}"
puts "shared: #{shared.size} #{shared[63 * 1000 + 190]}"
GC.collect
ok = (0...fibers).all? { |f| (0...200).step(10).all? { |r| shared[f * 1000 + r] == "f#{f}r#{r}" } }
puts "shared intact after a collection: #{ok}"
