import sys, torch, itertools
from acas import *; from crown import *
torch.set_num_threads(1)
net, fn = sys.argv[1], sys.argv[2]
fwd,sub,layers=load(net)
C=torch.zeros(1,5,dtype=torch.float64); C[0,0]=-1; rhs=torch.tensor([-3.991125645861615],dtype=torch.float64)
rows=[list(map(float,l.split()[1:])) for l in open(fn)]
rows.sort(key=lambda r:r[10])
r=torch.tensor(rows[0],dtype=torch.float64); xl,xu=r[:5].clone(),r[5:10].clone()
print('box',xl.numpy(),xu.numpy(),'tessera score',float(r[10]))
def bnd(a,b):
    with torch.no_grad():
        bounds,rel=layer_bounds(layers,a,b); lb,A=final(layers,C,rhs,a,b,bounds,rel)
    return lb[:,0],A,rel
lb,A,rel=bnd(xl[None],xu[None]); print('python crown',float(lb), 'coeffs',A[0,0].numpy(), 'unstable',[int(q[3].sum()) for q in rel])
with torch.no_grad():
    s=xl+(xu-xl)*torch.rand(20000,5); print('sampled min margin', float((3.991125645861615-fwd(s)[:,0]).min()))
for d in range(5):
    for k in (2,4,16):
        t=torch.linspace(0,1,k+1,dtype=torch.float64)
        a=xl.repeat(k,1); b=xu.repeat(k,1)
        a[:,d]=xl[d]+(xu[d]-xl[d])*t[:-1]; b[:,d]=xl[d]+(xu[d]-xl[d])*t[1:]
        lb,_,_=bnd(a,b); print(f'  split dim {d} into {k}: worst child {float(lb.min()):.3f}')
